"""What the int8 builds share (`quantized.py` for MiniLM, `e5_quantized.py` for e5-small): the quantization of
the weight MatMuls, the quality gate and the manifest written beside the graph, and the check of a built graph
against its manifest before it serves anything (docs/embedders-builds.md)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from core.embedders.graphs import is_built, lock, make_folder, manifest_path
from core.errors import ModelFileError
from core.json_types import JsonObject

if TYPE_CHECKING:  # onnx is imported where a graph is built, not on every start
    import onnx

    from core.embedders.smoothing import Feeds, Vectors


class BuildRecipe(Protocol):
    """What an int8 build records of its recipe (quantized.Recipe for MiniLM, e5_quantized.E5Recipe)."""

    @property
    def embedder_id(self) -> str: ...
    @property
    def float_nodes(self) -> tuple[str, ...]: ...
    @property
    def smooth_alpha(self) -> float | None: ...
    @property
    def per_token(self) -> bool: ...


# The per-token scheme's name in a graph's file name and manifest and in the embedding cache's keys:
# "tok-u8u8", the weights stored unsigned around 128 (`unsigned_weights`). With signed weights ("tok"),
# onnxruntime's AVX2 kernel for unsigned x signed int8 adds pairs of products in int16, which saturates (a
# MatMulInteger off by up to 6e6 at the extremes): only CPUs with VNNI summed exactly. Its unsigned x unsigned
# kernels are exact on every x86 CPU (tests/engine/test_int8_exact.py) and compute the same integers; signed x
# signed ones are exact too but 7x slower on AVX2. A graph or a cached vector of an earlier scheme is never
# read again.
PER_TOKEN = "tok-u8u8"


def activations(recipe: BuildRecipe) -> str:
    """How a recipe quantizes activations, in its graph's file name and manifest: `PER_TOKEN`, one scale per
    token; "tensor", one per tensor (a text's vector then depends on its batch; only for the benchmark)."""
    return PER_TOKEN if recipe.per_token else "tensor"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """The quantizer logs on the root logger, a line per tensor and advice meant for its own users: hundreds
    of lines in a service's log at its first start. Its errors still show."""

    def keep(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or "onnxruntime" not in record.pathname

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def quantize_matmuls(source: Path, dest: Path, float_nodes: Sequence[str], per_token: bool = True) -> None:
    """Every weight MatMul of `source` but `float_nodes` in int8: weights with one scale per output column,
    activations with one scale per token (`per_token_activations`), or else per tensor."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet_quantizer():
        quantize_dynamic(
            source,
            dest,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=list(float_nodes),
            extra_options={"MatMulConstBOnly": True},  # attention's activation x activation stays float
        )
    model = unsigned_weights(onnx.load(str(dest)))
    onnx.save(per_token_activations(model) if per_token else model, str(dest))


def unsigned_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with each `MatMulInteger`'s int8 weights and zero points stored as uint8 plus 128: the same
    (weight - zero point) integers, so the same products, computed by onnxruntime's exact unsigned x unsigned
    kernels instead of the unsigned x signed ones that saturate on CPUs without VNNI (`PER_TOKEN`)."""
    from onnx import numpy_helper

    weights = matmul_weights(model)
    for index, tensor in enumerate(model.graph.initializer):
        if tensor.name in weights:
            values = numpy_helper.to_array(tensor)
            if values.dtype != np.int8:
                raise ModelFileError(f"weight {tensor.name!r} is {values.dtype}, not int8")
            shifted = (values.astype(np.int16) + 128).astype(np.uint8)
            model.graph.initializer[index].CopyFrom(numpy_helper.from_array(shifted, tensor.name))
    return model


def matmul_weights(model: onnx.ModelProto) -> set[str]:
    """The names of every `MatMulInteger`'s weights and weight zero points (its inputs 1 and 3)."""
    return {i for n in model.graph.node if n.op_type == "MatMulInteger" for i in n.input[1::2]}


def per_token_activations(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (quantize_dynamic's output) with each activation quantized per token instead of per tensor.

    `DynamicQuantizeLinear` takes one scale and zero point over its whole input: every row of a batch and
    every padding position, so a text's vector would depend on the texts batched with it. Each one is replaced
    by a symmetric quantization with one scale per token (max |x| over the last axis / 127) around the fixed
    zero point 128: a token's int8 values then depend on that token alone, and the `MatMulInteger` that reads
    them keeps its scalar zero point (onnxruntime takes no per-row one). The output is then scaled by the
    weight's column scales and the token's scale in two `Mul`s (`_scale_per_token`)."""
    from onnx import helper, numpy_helper

    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    nodes: list[onnx.NodeProto] = []
    model.graph.initializer.extend(
        [
            numpy_helper.from_array(np.array(127, np.float32), "per_token_127"),
            numpy_helper.from_array(np.array(1 / 127, np.float32), "per_token_inv127"),
            numpy_helper.from_array(np.array(1e-12, np.float32), "per_token_tiny"),
            numpy_helper.from_array(np.array(1, np.float32), "per_token_one"),
            numpy_helper.from_array(np.array(128, np.uint8), "per_token_zero_point"),
        ]
    )
    if opset >= 18:
        model.graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), "per_token_axes"))
    for node in model.graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        x, (q, scale, zero_point) = node.input[0], node.output
        p = f"{node.name}_per_token"
        nodes += [
            *(_reduce_last(op, x, f"{p}_{op}", opset) for op in ("ReduceMax", "ReduceMin")),
            helper.make_node("Neg", [f"{p}_ReduceMin"], [f"{p}_neg_min"]),
            helper.make_node("Max", [f"{p}_ReduceMax", f"{p}_neg_min", "per_token_tiny"], [f"{p}_absmax"]),
            helper.make_node("Mul", [f"{p}_absmax", "per_token_inv127"], [scale]),
            helper.make_node("Div", ["per_token_127", f"{p}_absmax"], [f"{p}_inverse"]),  # [..., 1]
            helper.make_node("Mul", [x, f"{p}_inverse"], [f"{p}_levels"]),  # a Mul costs less than a Div
            helper.make_node("QuantizeLinear", [f"{p}_levels", "per_token_one", "per_token_zero_point"], [q]),
            helper.make_node("Identity", ["per_token_zero_point"], [zero_point]),
        ]
    scales = {n.output[1] for n in model.graph.node if n.op_type == "DynamicQuantizeLinear"}
    del model.graph.node[:]
    model.graph.node.extend(_scale_per_token(nodes, scales))
    return model


def _scale_per_token(nodes: list[onnx.NodeProto], token_scales: set[str]) -> list[onnx.NodeProto]:
    """quantize_dynamic scales a `MatMulInteger`'s output by `Mul(y, Mul(activation scale, weight scales))`.
    With a per-token activation scale, onnxruntime's fusion of that into `MatMulIntegerToFloat` (which takes a
    per-tensor activation scale) computes wrong values (min cosine 0.79 to the engine), so each becomes
    `Mul(Mul(y, weight scales), token scale)`: the fusion takes the first `Mul`, the token scale follows."""
    from onnx import helper

    products = {n.output[0]: n for n in nodes if n.op_type == "Mul" and n.input[0] in token_scales}
    out: list[onnx.NodeProto] = []
    for node in nodes:
        if node.output[0] in products:
            continue
        if node.op_type == "Mul" and node.input[1] in products:
            token_scale, weight_scales = products[node.input[1]].input
            by_column = f"{node.output[0]}_by_column"
            out += [
                helper.make_node(
                    "Mul", [node.input[0], weight_scales], [by_column], name=f"{node.name}_column"
                ),
                helper.make_node(
                    "Mul", [by_column, token_scale], [node.output[0]], name=f"{node.name}_token"
                ),
            ]
            continue
        if any(i in products for i in node.input):
            raise ModelFileError(f"unexpected use of an activation scale by {node.op_type} {node.name!r}")
        out.append(node)
    return out


def _reduce_last(op: str, x: str, out: str, opset: int) -> onnx.NodeProto:
    """`op` over the last axis of `x`, kept as a length-1 axis."""
    from onnx import helper

    if opset >= 18:  # axes became an input
        return helper.make_node(op, [x, "per_token_axes"], [out], keepdims=1)
    return helper.make_node(op, [x], [out], axes=[-1], keepdims=1)


class GraphRunner(Protocol):
    """A tokenizer and a session over one graph: what the build gates with."""

    def encode(self, texts: list[str]) -> np.ndarray:
        """The texts' L2-normalised vectors."""
        ...


def build_int8(
    float_model: onnx.ModelProto,
    dest: Path,
    recipe: BuildRecipe,
    runner: Callable[[Path], GraphRunner],
    feeds: Feeds,
    texts: list[str],
    reference: np.ndarray | Vectors,
    source_sha256: str,
    min_cosine: float,
    what: str,
    node_prefix: str = "n_",
) -> JsonObject:
    """Migrate `float_model`'s activation outliers into its weights (`recipe.smooth_alpha`, calibrated on
    `texts`, tokenized by `feeds`), quantize its weight MatMuls but `recipe.float_nodes` (`quantize_matmuls`),
    gate the result on its cosines to `reference` over `texts` and `install` it at `dest`; ModelFileError and
    nothing installed on a miss. `reference`: the texts' reference vectors, or how to read the float graph's
    own (`smoothing.Vectors`), then taken from the calibration pass rather than a second float encode.
    `runner(graph)` runs the built graph: the encoder's own tokenizer, windows and pooling. `float_model` is
    changed in place. `node_prefix` + a name in `recipe.float_nodes` is a node of the graph (graph_builder
    prefixes its names; a graph made elsewhere has none)."""
    import onnx

    from core.embedders.smoothing import calibrate, matmul_inputs, smooth

    alpha = recipe.smooth_alpha
    expected, float_vectors = (reference, None) if isinstance(reference, np.ndarray) else (None, reference)
    if alpha is not None or float_vectors is not None:  # one float pass measures both
        maxima, vectors = calibrate(
            float_model, matmul_inputs(float_model) if alpha is not None else [], texts, feeds, float_vectors
        )
        expected = vectors if vectors is not None else expected
        if alpha is not None:
            smooth(float_model, maxima, alpha)
    assert expected is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".build-") as tmp:
        to_quantize, quant_path = Path(tmp) / "float.onnx", Path(tmp) / "qint8.onnx"
        onnx.save(float_model, str(to_quantize))
        float_nodes = [f"{node_prefix}{name}" for name in recipe.float_nodes]
        quantize_matmuls(to_quantize, quant_path, float_nodes, per_token=recipe.per_token)
        cosine = (expected * runner(quant_path).encode(texts)).sum(axis=1)
        return install(quant_path, dest, recipe, source_sha256, cosine, min_cosine, what)


def install(
    built: Path,
    dest: Path,
    recipe: BuildRecipe,
    source_sha256: str,
    cosine: np.ndarray,
    min_cosine: float,
    what: str,
) -> JsonObject:
    """Gate `built` on its cosines to the reference (`what` names both for the error), then move it to `dest`
    atomically with its manifest beside it (what `recipe` built it from: its `embedder_id`, `float_nodes`,
    `smooth_alpha`); ModelFileError, and nothing installed, on a miss."""
    import onnxruntime

    manifest = {
        "id": recipe.embedder_id,
        "source_sha256": source_sha256,
        "float_nodes": list(recipe.float_nodes),
        "smooth_alpha": recipe.smooth_alpha,
        "activations": activations(recipe),
        "onnxruntime": onnxruntime.__version__,
        "gate_texts": len(cosine),
        "gate_cosine_min": round(float(cosine.min()), 5),
        "gate_cosine_mean": round(float(cosine.mean()), 6),
    }
    if cosine.min() < min_cosine:
        raise ModelFileError(
            f"the {what} built with onnxruntime {onnxruntime.__version__} misses its quality gate: "
            f"minimum cosine {cosine.min():.4f} < {min_cosine} on {len(cosine)} texts"
        )
    manifest["sha256"] = sha256(built)
    # A reader takes no lock: it sees no file or the whole file, and the manifest, moved in place last, only
    # once the graph is whole.
    os.replace(built, dest)
    written = built.with_suffix(".json")
    written.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(written, manifest_path(dest))
    return manifest


def checked_graph(graph: Path, build: Callable[[], object], source_sha256: str, recipe: BuildRecipe) -> Path:
    """`graph`, built first by `build()` if it or its manifest is missing, and checked against the manifest:
    the same source and recipe, and the sha256 the build recorded. A built graph is checked without any lock;
    a build holds `graph`'s own lock file, so processes and threads asking for it meanwhile wait for that
    build rather than make their own, and a build of another graph holds up none of them."""
    embedder_id = recipe.embedder_id
    if not is_built(graph):
        make_folder(graph.parent)
        with lock(graph):
            if not is_built(graph):  # not built while we waited
                build()
    try:
        manifest = json.loads(manifest_path(graph).read_text())
        expected = manifest["sha256"]
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFileError(f"{embedder_id}: manifest unreadable: {manifest_path(graph)}") from exc
    if (manifest.get("source_sha256"), manifest.get("id"), manifest.get("activations")) != (
        source_sha256,
        embedder_id,
        activations(recipe),
    ):
        raise ModelFileError(f"{embedder_id}: {graph} was built from another source or recipe")
    found = sha256(graph)
    if found != expected:
        raise ModelFileError(
            f"{embedder_id}: graph failed its sha256 check: {graph} has {found}, expected {expected} "
            "(delete it and its .json to rebuild)"
        )
    return graph
