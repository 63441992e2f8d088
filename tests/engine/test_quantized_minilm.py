"""The int8-compute MiniLM (issue 29): built once from the shipped graph, gated, verified at every load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.minilm import MiniLMEmbedder, default_model_path
from core.embedders.quantized import (
    GATE_MIN_COSINE,
    QINT8_ID,
    QuantizedMiniLMEmbedder,
    built_path,
    float_matmul_graph,
)
from core.engine.errors import ModelFileError

pytestmark = pytest.mark.slow

TEXTS = [
    "Could you please take a look at my edit when you have a moment? Thanks!",
    "Why on earth did you revert this again?",
    "The central bank raised interest rates by a quarter point on Tuesday.",
    "I absolutely love this blender, it is quiet and crushes ice in seconds.",
    "ok",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> QuantizedMiniLMEmbedder:
    """One build (about 10-20 s of CPU) shared by the module's tests."""
    emb = QuantizedMiniLMEmbedder(directory=tmp_path_factory.mktemp("embedders"), threads=1)
    emb.load()
    return emb


def test_built_graph_computes_in_int8_and_passed_its_gate(built: QuantizedMiniLMEmbedder) -> None:
    import onnx

    graph = built_path(built.directory)
    ops = [n.op_type for n in onnx.load(str(graph)).graph.node]
    assert ops.count("MatMulInteger") >= 24  # the quantized weight MatMuls really run in int8
    assert "DynamicQuantizeLinear" in ops
    manifest = json.loads(graph.with_suffix(".json").read_text())
    assert manifest["id"] == QINT8_ID
    assert manifest["gate_cosine_min"] >= GATE_MIN_COSINE


def test_vectors_stay_close_to_todays_minilm(built: QuantizedMiniLMEmbedder) -> None:
    vecs = built.encode(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    today = MiniLMEmbedder(threads=1).encode(TEXTS)
    assert ((vecs * today).sum(axis=1) >= GATE_MIN_COSINE).all()
    assert built.id == QINT8_ID != MiniLMEmbedder().id  # different vectors, so a different id


def test_folding_keeps_the_shipped_weights_exactly() -> None:
    import onnx
    from onnx import numpy_helper

    shipped = onnx.load(str(default_model_path()))
    init = {i.name: numpy_helper.to_array(i) for i in shipped.graph.initializer}
    folded = {
        i.name: numpy_helper.to_array(i) for i in float_matmul_graph(default_model_path()).graph.initializer
    }
    # The first query projection: int8 values times their per-column scale, as the shipped graph computes.
    np.testing.assert_array_equal(
        folded["val_49"], init["val_49_q"].astype(np.float32) * init["val_49_scale"]
    )
    assert "val_49_q" not in folded


def test_second_load_reuses_the_stored_graph(built: QuantizedMiniLMEmbedder) -> None:
    graph = built_path(built.directory)
    mtime = graph.stat().st_mtime_ns
    again = QuantizedMiniLMEmbedder(directory=built.directory, threads=1)
    np.testing.assert_allclose(again.encode(TEXTS[:2]), built.encode(TEXTS[:2]), atol=1e-6)
    assert graph.stat().st_mtime_ns == mtime


def test_tampered_graph_is_refused_at_load(built: QuantizedMiniLMEmbedder, tmp_path: Path) -> None:
    graph = built_path(built.directory)
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    bad = built_path(copy_dir)
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    bad.with_suffix(".json").write_text(graph.with_suffix(".json").read_text())
    with pytest.raises(ModelFileError, match="sha256"):
        QuantizedMiniLMEmbedder(directory=copy_dir).load()


def test_registry_resolves_the_new_id(
    monkeypatch: pytest.MonkeyPatch, built: QuantizedMiniLMEmbedder
) -> None:
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(built.directory))
    emb = get_embedder(QINT8_ID)
    assert isinstance(emb, QuantizedMiniLMEmbedder) and emb.id == QINT8_ID
