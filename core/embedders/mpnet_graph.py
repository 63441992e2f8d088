"""all-mpnet-base-v2's encoder as an ONNX graph from its safetensors weights, as Hugging Face's `MPNetModel`.

Inputs `input_ids` and `attention_mask` ([batch, tokens], int64, rows padded on the right with <pad> = 1);
output `pooled` ([batch, 768]): the mean of the last hidden states over each row's real tokens (<s> and </s>
included, as sentence-transformers' mean pooling), not normalised. Per token: word embedding + position
embedding (position = padding index 1 + the token's 1-based index in the row, as MPNet counts real tokens),
LayerNorm (eps 1e-5); then 12 post-LayerNorm BERT layers (graph_builder.bert_layers) whose attention scores
all get one relative position bias: a learnt value per head and bucket of (key position - query position),
T5's 32 buckets (16 each way: 8 exact distances, then logarithmic up to 128). The bias depends on positions
only, so it is the same for a row whatever the batch's length (padding is masked after it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from core.embedders.graph_builder import GraphBuilder, bert_layers, mean_pooled, padding_bias

if TYPE_CHECKING:  # onnx is imported where a graph is built: it costs a second on every start
    import onnx

HIDDEN = 768  # all-mpnet-base-v2's (the graph takes its sizes from the weights it is given)
EPS = 1e-5
PADDING_INDEX = 1
BUCKETS, MAX_DISTANCE = 32, 128
MAX_TOKENS = 384  # sentence-transformers' max_seq_length for this model: longer texts are truncated

_NAMES = {  # graph_builder's weight prefixes -> the safetensors names in layer i
    "q": "attention.attn.q",
    "k": "attention.attn.k",
    "v": "attention.attn.v",
    "ao": "attention.attn.o",
    "aln": "attention.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def relative_buckets(length: int) -> np.ndarray:
    """[length, length] bucket of (key - query) position, as transformers' MPNet `relative_position_bucket`
    (computed in float32 and truncated toward zero, as torch does)."""
    n = -(np.arange(length)[None, :] - np.arange(length)[:, None])
    half = BUCKETS // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    far = np.maximum(n, exact).astype(np.float32)  # n < exact takes the exact bucket below
    large = exact + (np.log(far / exact) / np.float32(np.log(MAX_DISTANCE / exact)) * (half - exact)).astype(
        np.int64
    )
    large = np.minimum(large, half - 1)
    buckets: np.ndarray = ret + np.where(n < exact, n, large)
    return buckets


def build_graph(w: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """The float32 encoder as an onnx ModelProto (see the module docstring); `w`: the safetensors tensors."""
    b = GraphBuilder()
    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    heads = w["encoder.relative_attention_bias.weight"].shape[1]
    layers = sum(1 for key in w if key.endswith(".attention.attn.q.weight"))

    def name(prefix: str) -> str:
        layer, part = prefix.split(".")
        return f"encoder.layer.{layer[1:]}.{_NAMES[part]}"

    def linear(x: str, prefix: str) -> str:
        weight = w[f"{name(prefix)}.weight"].T  # torch's Linear stores [out, in]
        y = b.op("MatMul", [x, b.const(f"{prefix}.w", weight)], name=f"{prefix}.mm")
        return b.op("Add", [y, b.const(f"{prefix}.b", w[f"{name(prefix)}.bias"])], name=f"{prefix}.out")

    def layernorm(x: str, prefix: str, source: str | None = None) -> str:
        source = source or name(prefix)
        return b.op(
            "LayerNormalization",
            [x, b.const(f"{prefix}.w", w[f"{source}.weight"]), b.const(f"{prefix}.b", w[f"{source}.bias"])],
            name=f"{prefix}.out",
            axis=-1,
            epsilon=EPS,
        )

    words = b.op("Gather", [b.const("emb.word", w["embeddings.word_embeddings.weight"]), "input_ids"], axis=0)
    length = b.op("Shape", ["input_ids"], start=1, end=2)  # [tokens], 1-D
    first = b.const("i.first", np.array([PADDING_INDEX + 1], np.int64))
    axis0 = b.const("i.axis0", np.array([0], np.int64))
    positions = b.op(
        "Slice",
        [
            b.const("emb.pos", w["embeddings.position_embeddings.weight"]),
            first,
            b.op("Add", [length, first]),
            axis0,
        ],
    )  # rows 2 .. tokens + 1, broadcast over the batch
    x = layernorm(b.op("Add", [words, positions]), "emb.ln", "embeddings.LayerNorm")

    mask, bias = padding_bias(b)
    zero = b.const("i.zero", np.array([0, 0], np.int64))
    square = b.op("Concat", [length, length], axis=0)
    buckets = b.op(
        "Slice",
        [
            b.const("rel.buckets", relative_buckets(MAX_TOKENS).astype(np.int32)),
            zero,
            square,
            b.const("i.axes01", np.array([0, 1], np.int64)),
        ],
    )
    values = b.op(
        "Gather", [b.const("rel.bias", w["encoder.relative_attention_bias.weight"]), buckets], axis=0
    )
    position_bias = b.op("Transpose", [values], perm=[2, 0, 1])  # [heads, L, L]
    x = bert_layers(b, x, bias, layers, hidden, heads, linear, layernorm, position_bias)
    mean_pooled(b, x, mask)
    return b.model("all-mpnet-base-v2", hidden)
