"""SmoothQuant-style scale migration for int8 MatMuls (recipe qi8v2).

Dynamic int8 quantizes each activation tensor with one scale, so a few outlier channels (LayerNorm and GELU
outputs have some ~50x the median) squeeze every other channel into a handful of levels. Dividing activation
channel j by s_j and multiplying row j of each weight that reads it by s_j leaves the float product unchanged
(x W = (x / s)(s W)) but moves the outliers into the weights, which are quantized per output column and take
them better. s_j = max|x_j|^alpha / max|W_j|^(1 - alpha) (Xiao et al., 2023), with max|x_j| measured on
calibration texts. The division is one `Mul` per activation tensor, shared by every MatMul that reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.embedders.onnx_session import open_session

if TYPE_CHECKING:  # imported where a graph is changed, not on every start
    import onnx

Feeds = Callable[[list[str]], dict[str, np.ndarray]]  # tokenized batch -> session inputs


def activation_maxima(
    model: onnx.ModelProto, names: Sequence[str], texts: Sequence[str], feeds: Feeds
) -> dict[str, np.ndarray]:
    """Per-channel max |value| of each named tensor over the real (unpadded) tokens of `texts`."""
    import onnx
    from onnx import helper

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.extend(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names)
    session = open_session(probe.SerializeToString())
    maxima: dict[str, np.ndarray] = {}
    for start in range(0, len(texts), 16):
        batch = feeds(list(texts[start : start + 16]))
        real = batch["attention_mask"].astype(bool)
        for name, out in zip(names, session.run(list(names), batch), strict=True):
            top = np.abs(out[real]).max(axis=0)
            maxima[name] = np.maximum(maxima[name], top) if name in maxima else top
    return maxima


def smooth(model: onnx.ModelProto, texts: Sequence[str], feeds: Feeds, alpha: float) -> onnx.ModelProto:
    """`model` with every weight MatMul's input activation scale migrated into its weights (in place)."""
    from onnx import helper, numpy_helper

    init = {i.name: i for i in model.graph.initializer}
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in init]
    acts = sorted({n.input[0] for n in matmuls})
    maxima = activation_maxima(model, acts, texts, feeds)
    divide: dict[str, onnx.NodeProto] = {}  # smoothed tensor name -> its Mul node
    for act in acts:
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
