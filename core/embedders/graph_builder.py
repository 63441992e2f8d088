"""What the hand-built encoder graphs share (e5_graph.py for e5-small, mpnet_graph.py for all-mpnet-base-v2):
a small ONNX graph builder, the post-LayerNorm BERT layer stack, the padding mask and the mean pooling.

Both encoders are BERT layers (12-head attention, GELU (erf) FFN, residual + LayerNorm after each); they
differ in their embeddings and in MPNet's relative position bias, added to every layer's attention scores.
Node names are given by the caller's prefixes (`{prefix}.mm` for a weight MatMul), which recipes name to keep
in float.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # onnx is imported where a graph is built: it costs a second on every start
    import onnx

MASKED = -1e9  # added to attention scores of padding: exp() of it is exactly 0, so padding weighs nothing
# IR 10 (onnx 1.16): onnx 1.19+ writes a newer IR by default, which onnxruntime 1.24 refuses to load.
IR_VERSION = 10
OPSET = 17  # LayerNormalization

Layer = Callable[[str, str], str]  # (input tensor, weight prefix) -> output tensor


class GraphBuilder:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    # Any: an onnx node attribute may be any value onnx.helper.make_node turns into an AttributeProto.
    def op(self, op_type: str, inputs: list[str], name: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = name or f"{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n_{out}", **attrs))
        return out

    def model(self, name: str, hidden: int) -> onnx.ModelProto:
        """The graph: inputs `input_ids` and `attention_mask` ([batch, tokens] int64), output `pooled`."""
        from onnx import TensorProto, helper

        graph = helper.make_graph(
            self.nodes,
            name,
            [
                helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
            ],
            [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
            self.inits,
        )
        opsets = [helper.make_opsetid("", OPSET)]
        return helper.make_model(
            graph, opset_imports=opsets, producer_name="scoring-workbench", ir_version=IR_VERSION
        )


def padding_bias(b: GraphBuilder) -> tuple[str, str]:
    """(the mask as float [B, L], (1 - mask) * MASKED shaped [B, 1, 1, L]) to broadcast over heads and
    query tokens."""
    from onnx import TensorProto

    mask = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = b.op(
        "Mul",
        [
            b.op("Sub", [b.const("f.one", np.array(1.0, np.float32)), mask]),
            b.const("f.masked", np.array(MASKED, np.float32)),
        ],
    )
    return mask, b.op("Unsqueeze", [bias, b.const("axes.1.2", np.array([1, 2], np.int64))])


def bert_layers(
    b: GraphBuilder,
    x: str,
    bias: str,
    layers: int,
    hidden: int,
    heads: int,
    linear: Layer,
    layernorm: Layer,
    position_bias: str | None = None,
) -> str:
    """`layers` post-LayerNorm BERT layers over `x` ([B, L, hidden]); `bias` masks padding, `position_bias`
    ([heads, L, L]) is added to every layer's scores. Layer i's weights are prefixed `l{i}.` and named q, k,
    v, ao (attention output), aln, fi (FFN in), fo (FFN out) and oln."""
    hd = hidden // heads
    heads_shape = b.const("shape.heads", np.array([0, 0, heads, hd], np.int64))
    scale = b.const("f.scale", np.array(1.0 / np.sqrt(hd), np.float32))
    for i in range(layers):
        p = f"l{i}"
        q = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.q"), heads_shape])], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.k"), heads_shape])], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.v"), heads_shape])], perm=[0, 2, 1, 3])
        scores = b.op("Mul", [b.op("MatMul", [q, k]), scale])
        if position_bias is not None:
            scores = b.op("Add", [scores, position_bias])
        scores = b.op("Add", [scores, bias])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        ctx = b.op(
            "Reshape",
            [
                b.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                b.const(f"{p}.shape.ctx", np.array([0, 0, hidden], np.int64)),
            ],
        )
        x = layernorm(b.op("Add", [x, linear(ctx, f"{p}.ao")]), f"{p}.aln")
        mid = linear(x, f"{p}.fi")
        erf = b.op(
            "Erf", [b.op("Mul", [mid, b.const(f"{p}.f.rsqrt2", np.array(1 / np.sqrt(2), np.float32))])]
        )
        gelu = b.op(
            "Mul",
            [
                b.op("Mul", [mid, b.op("Add", [erf, b.const(f"{p}.f.one", np.array(1.0, np.float32))])]),
                b.const(f"{p}.f.half", np.array(0.5, np.float32)),
            ],
        )
        x = layernorm(b.op("Add", [x, linear(gelu, f"{p}.fo")]), f"{p}.oln")
    return x


def mean_pooled(b: GraphBuilder, x: str, mask: str) -> str:
    """`pooled`: the mean of `x` over each row's real tokens (not normalised)."""
    weights = b.op("Unsqueeze", [mask, b.const("axes.2", np.array([2], np.int64))])  # [B, L, 1]
    total = b.op(
        "ReduceSum", [b.op("Mul", [x, weights]), b.const("axes.1", np.array([1], np.int64))], keepdims=0
    )
    count = b.op("ReduceSum", [weights, b.const("axes.1b", np.array([1], np.int64))], keepdims=0)
    return b.op("Div", [total, count], name="pooled")
