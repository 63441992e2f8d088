"""The int8-compute MiniLM (qi8v2): built once from the shipped graph, gated, checked at every load."""

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
    QINT8V2_ID,
    V2_FLOAT_NODES,
    QuantizedMiniLMEmbedder,
    Recipe,
    build,
    built_path,
    float_matmul_graph,
)
from core.engine.errors import EmbedderUnavailableError, ModelFileError
from tests.support.graphs import weight_types

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
    """The qi8v2 build (smoothing + int8), in the directory every test of the run builds into."""
    emb = QuantizedMiniLMEmbedder(directory=embedder_dir, threads=1)
    emb.load()
    return emb


def test_all_but_two_matmuls_run_in_int8_and_the_gate_passed(built: QuantizedMiniLMEmbedder) -> None:
    import onnx

    assert built.recipe == QI8V2  # the default recipe
    graph = built_path(built.directory, QI8V2)
    model = onnx.load(str(graph))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulInteger") == 34  # 36 weight MatMuls minus layers 0-1 FFN outputs
    # Activations quantized per token (QuantizeLinear), never per tensor (DynamicQuantizeLinear): a text's
    # vector must not depend on the texts batched with it.
    assert "DynamicQuantizeLinear" not in ops and ops.count("QuantizeLinear") >= 12
    # Unsigned weights: their products are exact on every CPU (test_int8_exact.py).
    assert weight_types(model) == {np.dtype(np.uint8)}
    manifest = json.loads(graph.with_suffix(".json").read_text())
    assert manifest["id"] == QINT8V2_ID and manifest["activations"] == PER_TOKEN
    assert manifest["smooth_alpha"] == QI8V2.smooth_alpha
    assert manifest["gate_cosine_min"] >= GATE_MIN_COSINE


def test_vectors_stay_close_to_todays_minilm_under_their_own_id(built: QuantizedMiniLMEmbedder) -> None:
    vecs = built.encode(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    today = MiniLMEmbedder(threads=1).encode(TEXTS)
    assert ((vecs * today).sum(axis=1) >= GATE_MIN_COSINE).all()
    assert built.id == QINT8V2_ID != MiniLMEmbedder().id  # different vectors, so a different id


def test_folding_keeps_the_shipped_weights_exactly() -> None:
    import onnx
    from onnx import numpy_helper

    shipped = onnx.load(str(default_model_path()))
    init = {i.name: numpy_helper.to_array(i) for i in shipped.graph.initializer}
    folded = float_matmul_graph(default_model_path(), V2_FLOAT_NODES).graph.initializer
    folded_arrays = {i.name: numpy_helper.to_array(i) for i in folded}
    # The first query projection: int8 values times their per-column scale, as the shipped graph computes.
    np.testing.assert_array_equal(
        folded_arrays["val_49"], init["val_49_q"].astype(np.float32) * init["val_49_scale"]
    )
    assert "val_49_q" not in folded_arrays


def test_second_load_reuses_the_stored_graph(built: QuantizedMiniLMEmbedder) -> None:
    graph = built_path(built.directory, QI8V2)
    mtime = graph.stat().st_mtime_ns
    again = QuantizedMiniLMEmbedder(directory=built.directory, threads=1)
    np.testing.assert_allclose(again.encode(TEXTS[:2]), built.encode(TEXTS[:2]), atol=1e-6)
    assert graph.stat().st_mtime_ns == mtime


def test_gate_refuses_a_graph_that_misses_it(tmp_path: Path) -> None:
    # The real build of everything in int8 without smoothing, held to a bar int8 cannot reach (it moves
    # vectors by more than 1e-4) on a few texts: the miss and the clean-up after it are those of the full
    # gate, without its ~600 texts encoded twice.
    naive = Recipe("naive-test", float_nodes=())
    dest = built_path(tmp_path, naive)
    with pytest.raises(ModelFileError, match="misses its quality gate: minimum cosine .* on 5 texts"):
        build(default_model_path(), dest, naive, min_cosine=0.9999, texts=TEXTS)
    assert not dest.exists() and not dest.with_suffix(".json").exists()
    assert not list(tmp_path.glob(".build-*"))  # the temporary build directory is gone too


def test_tampered_graph_is_refused_at_load(built: QuantizedMiniLMEmbedder, tmp_path: Path) -> None:
    graph = built_path(built.directory, QI8V2)
    bad = built_path(tmp_path, QI8V2)
    data = bytearray(graph.read_bytes())
    data[-100] ^= 0x01
    bad.write_bytes(bytes(data))
    bad.with_suffix(".json").write_text(graph.with_suffix(".json").read_text())
    with pytest.raises(ModelFileError, match="sha256"):
        QuantizedMiniLMEmbedder(directory=tmp_path, recipe=QI8V2).load()


def test_registry_resolves_name_and_id(
    monkeypatch: pytest.MonkeyPatch, built: QuantizedMiniLMEmbedder
) -> None:
    assert built.directory is not None
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(built.directory.parent))  # the cache
    emb = get_embedder("minilm-qint8v2")
    assert isinstance(emb, QuantizedMiniLMEmbedder) and emb.id == QINT8V2_ID
    assert get_embedder(QINT8V2_ID) is emb
    with pytest.raises(EmbedderUnavailableError, match="not available"):  # qi8v1, retired
        get_embedder("minilm-qint8")


def test_service_scoring_session_keeps_the_recipe(built: QuantizedMiniLMEmbedder) -> None:
    # The service scores through a one-thread copy of its embedder; a plain MiniLM copy would refuse every
    # snapshot trained with qi8v2 (id mismatch), as benchmarks.load found.
    from service.domain.embedding import _scoring_model

    copy = _scoring_model(built)
    assert isinstance(copy, QuantizedMiniLMEmbedder) and copy.id == built.id
    np.testing.assert_allclose(copy.encode(TEXTS[:2]), built.encode(TEXTS[:2]), atol=1e-5)
