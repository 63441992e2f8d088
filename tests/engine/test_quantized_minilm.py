"""The int8-compute MiniLM: built once from the shipped graph, gated, verified at every load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.int8_build import PER_TOKEN
from core.embedders.minilm import MiniLMEmbedder, default_model_path
from core.embedders.quantized import (
    GATE_MIN_COSINE,
    QI8V2,
    QINT8_ID,
    QINT8V2_ID,
    QuantizedMiniLMEmbedder,
    Recipe,
    build,
    built_path,
    float_matmul_graph,
)
from core.engine.errors import ModelFileError
from tests.engine.graphs import weight_types

pytestmark = pytest.mark.slow

TEXTS = [
    "Could you please take a look at my edit when you have a moment? Thanks!",
    "Why on earth did you revert this again?",
    "The central bank raised interest rates by a quarter point on Tuesday.",
    "I absolutely love this blender, it is quiet and crushes ice in seconds.",
    "ok",
]


@pytest.fixture(scope="module")
def built(embedder_dir: Path) -> QuantizedMiniLMEmbedder:
    """The run's one build (about 10-20 s of CPU), in the directory every test of the run builds into."""
    emb = QuantizedMiniLMEmbedder(directory=embedder_dir, threads=1)
    emb.load()
    return emb


def test_built_graph_computes_in_int8_and_passed_its_gate(built: QuantizedMiniLMEmbedder) -> None:
    import onnx

    graph = built_path(built.directory)
    model = onnx.load(str(graph))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulInteger") >= 24  # the quantized weight MatMuls really run in int8
    # Activations quantized per token (QuantizeLinear), never per tensor (DynamicQuantizeLinear): a text's
    # vector must not depend on the texts batched with it.
    assert "DynamicQuantizeLinear" not in ops and ops.count("QuantizeLinear") >= 12
    # Unsigned weights: their products are exact on every CPU (test_int8_exact.py).
    assert weight_types(model) == {np.dtype(np.uint8)}
    manifest = json.loads(graph.with_suffix(".json").read_text())
    assert manifest["id"] == QINT8_ID and manifest["activations"] == PER_TOKEN
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


@pytest.fixture(scope="module")
def built_v2(built: QuantizedMiniLMEmbedder) -> QuantizedMiniLMEmbedder:
    """The qi8v2 build (smoothing + int8), in the same directory as qi8v1's: one file per recipe."""
    emb = QuantizedMiniLMEmbedder(directory=built.directory, recipe=QI8V2, threads=1)
    emb.load()
    return emb


def test_v2_runs_all_but_two_matmuls_in_int8_and_passed_its_gate(built_v2: QuantizedMiniLMEmbedder) -> None:
    import onnx

    graph = built_path(built_v2.directory, QI8V2)
    assert graph != built_path(built_v2.directory)  # qi8v1's file is left as it was
    ops = [n.op_type for n in onnx.load(str(graph)).graph.node]
    assert ops.count("MatMulInteger") == 34  # 36 weight MatMuls minus layers 0-1 FFN outputs
    assert "DynamicQuantizeLinear" not in ops and ops.count("QuantizeLinear") >= 12
    manifest = json.loads(graph.with_suffix(".json").read_text())
    assert manifest["id"] == QINT8V2_ID and manifest["smooth_alpha"] == QI8V2.smooth_alpha
    assert manifest["gate_cosine_min"] >= GATE_MIN_COSINE


def test_v2_vectors_stay_close_and_have_their_own_id(
    built: QuantizedMiniLMEmbedder, built_v2: QuantizedMiniLMEmbedder
) -> None:
    vecs = built_v2.encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    today = MiniLMEmbedder(threads=1).encode(TEXTS)
    assert ((vecs * today).sum(axis=1) >= GATE_MIN_COSINE).all()
    assert len({built_v2.id, built.id, MiniLMEmbedder().id}) == 3
    assert not np.allclose(vecs, built.encode(TEXTS), atol=1e-4)  # a new recipe: new vectors


def test_gate_refuses_a_graph_that_misses_it(tmp_path: Path) -> None:
    # Everything in int8 without smoothing: min cosine ~0.97 on the gate texts, below 0.99.
    naive = Recipe("naive-test", float_nodes=())
    dest = built_path(tmp_path, naive)
    with pytest.raises(ModelFileError, match="misses its quality gate"):
        build(default_model_path(), dest, naive)
    assert not dest.exists() and not dest.with_suffix(".json").exists()
    assert not list(tmp_path.glob(".build-*"))  # the temporary build directory is gone too


def test_tampered_v2_graph_is_refused_at_load(built_v2: QuantizedMiniLMEmbedder, tmp_path: Path) -> None:
    graph = built_path(built_v2.directory, QI8V2)
    bad = built_path(tmp_path, QI8V2)
    data = bytearray(graph.read_bytes())
    data[-100] ^= 0x01
    bad.write_bytes(bytes(data))
    bad.with_suffix(".json").write_text(graph.with_suffix(".json").read_text())
    with pytest.raises(ModelFileError, match="sha256"):
        QuantizedMiniLMEmbedder(directory=tmp_path, recipe=QI8V2).load()


def test_registry_resolves_v2_by_name_and_id(
    monkeypatch: pytest.MonkeyPatch, built_v2: QuantizedMiniLMEmbedder
) -> None:
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(built_v2.directory))
    emb = get_embedder("minilm-qint8v2")
    assert isinstance(emb, QuantizedMiniLMEmbedder) and emb.id == QINT8V2_ID
    assert get_embedder(QINT8V2_ID) is emb


def test_service_scoring_session_keeps_the_recipe(built_v2: QuantizedMiniLMEmbedder) -> None:
    # The service scores through a one-thread copy of its embedder; a plain MiniLM copy would refuse every
    # snapshot trained with qi8v2 (id mismatch), as benchmarks.load found.
    from service.domain.embedding import _scoring_model

    copy = _scoring_model(built_v2)
    assert isinstance(copy, QuantizedMiniLMEmbedder) and copy.id == built_v2.id
    np.testing.assert_allclose(copy.encode(TEXTS[:2]), built_v2.encode(TEXTS[:2]), atol=1e-5)
