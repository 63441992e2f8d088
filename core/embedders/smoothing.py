"""SmoothQuant-style scale migration for int8 MatMuls (recipe qi8v2), and the float pass that calibrates it.

Dynamic int8 quantizes each activation tensor with one scale, so a few outlier channels (LayerNorm and GELU
outputs have some ~50x the median) squeeze every other channel into a handful of levels. Dividing activation
channel j by s_j and multiplying row j of each weight that reads it by s_j leaves the float product unchanged
(x W = (x / s)(s W)) but moves the outliers into the weights, which are quantized per output column and take
them better. s_j = max|x_j|^alpha / max|W_j|^(1 - alpha) (Xiao et al., 2023), with max|x_j| measured on
calibration texts. The division is one `Mul` per activation tensor, shared by every MatMul that reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from core.embedders.onnx_session import open_session

if TYPE_CHECKING:  # imported where a graph is changed, not on every start
    import onnx

Feeds = Callable[[list[str]], dict[str, np.ndarray]]  # tokenized batch -> session inputs
# A graph output, and how a batch's value of it becomes the batch's L2-normalised vectors given the batch's
# feeds: what the encoder does with the graph (normalise `pooled`; MiniLM: mean-pool its hidden states).
Vectors = tuple[str, Callable[[np.ndarray, dict[str, np.ndarray]], np.ndarray]]

# Texts per session run of the calibration pass, sorted by length first: the gate texts are short (5-181
# characters), so a batch in file order was mostly padding.
CALIBRATION_BATCH = 16


class Calibration(NamedTuple):
    """What one float pass over the calibration texts measured."""

    maxima: dict[str, np.ndarray]  # tensor name -> per-channel max |value| over the real tokens
    vectors: np.ndarray | None  # the texts' vectors (rows in the texts' order), when asked for


def matmul_inputs(model: onnx.ModelProto) -> list[str]:
    """The activation tensors read by `model`'s weight MatMuls: the ones `smooth` divides."""
    weights = {i.name for i in model.graph.initializer}
    return sorted({n.input[0] for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights})


def calibrate(
    model: onnx.ModelProto,
    names: Sequence[str],
    texts: Sequence[str],
    feeds: Feeds,
    vectors: Vectors | None = None,
    threads: int = 0,
) -> Calibration:
    """Run the float `model` once over `texts`: the per-channel max |value| of each named tensor over the
    texts' real (unpadded) tokens, and with `vectors` the texts' vectors too, so a build whose gate compares
    to the float graph need not encode the texts again. Batches hold texts of similar length (less padding);
    masked pooling makes a text's vector independent of its batch up to float rounding."""
    import onnx
    from onnx import helper

    outputs = list(names) + ([vectors[0]] if vectors else [])
    kept = len(model.graph.output)  # the probe's extra outputs are appended, serialized and removed again:
    model.graph.output.extend(  # no copy of a 440 MB graph
        helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None)
        for n in names
        if n not in {o.name for o in model.graph.output}
    )
    try:
        session = open_session(model.SerializeToString(), threads)
    finally:
        del model.graph.output[kept:]
    maxima: dict[str, np.ndarray] = {}
    out_vectors: list[np.ndarray] = []
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), CALIBRATION_BATCH):
        batch = feeds([texts[i] for i in order[start : start + CALIBRATION_BATCH]])
        real = batch["attention_mask"].astype(bool)
        values = session.run(outputs, batch)
        for name, out in zip(names, values, strict=False):
            top = np.abs(out[real]).max(axis=0)
            maxima[name] = np.maximum(maxima[name], top) if name in maxima else top
        if vectors:
            out_vectors.append(vectors[1](values[-1], batch))
    if not vectors:
        return Calibration(maxima, None)
    stacked = np.concatenate(out_vectors)
    in_order = np.empty_like(stacked)
    in_order[order] = stacked
    return Calibration(maxima, in_order)


def smooth(model: onnx.ModelProto, maxima: dict[str, np.ndarray], alpha: float) -> onnx.ModelProto:
    """`model` with every weight MatMul's input activation scale migrated into its weights (in place), from
    the activations' `maxima` (`calibrate` over `matmul_inputs(model)`)."""
    from onnx import helper, numpy_helper

    init = {i.name: i for i in model.graph.initializer}
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in init]
    divide: dict[str, onnx.NodeProto] = {}  # smoothed tensor name -> its Mul node
    for act in matmul_inputs(model):
        users = [n for n in matmuls if n.input[0] == act]
        weights = {n.name: numpy_helper.to_array(init[n.input[1]]) for n in users}
        w_max = np.max([np.abs(w).max(axis=1) for w in weights.values()], axis=0)
        s = (np.maximum(maxima[act], 1e-5) ** alpha / np.maximum(w_max, 1e-5) ** (1 - alpha)).astype(
            np.float32
        )
        inverse, smoothed = f"{act}_smooth_inv", f"{act}_smoothed"
        model.graph.initializer.append(numpy_helper.from_array((1.0 / s).astype(np.float32), inverse))
        divide[smoothed] = helper.make_node("Mul", [act, inverse], [smoothed], name=f"{act}_smooth")
        for node in users:
            w = init[node.input[1]]
            w.CopyFrom(numpy_helper.from_array((weights[node.name] * s[:, None]).astype(np.float32), w.name))
            node.input[0] = smoothed
    ordered = []  # each Mul goes right before its first reader, which keeps the graph topologically sorted
    for node in model.graph.node:
        ordered += [divide.pop(i) for i in node.input if i in divide]
        ordered.append(node)
    del model.graph.node[:]
    model.graph.node.extend(ordered)
    return model
