"""Snapshots: self-contained JSON, exact round trip, clear errors for anything else."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.base import Embedder
from core.engine import (
    EmbedderUnavailableError,
    Scorer,
    SnapshotFormatError,
    TrainingResult,
    load_snapshot,
)
from core.engine.snapshot_format import FORMAT, FORMAT_VERSION


def test_snapshot_layout(trained: TrainingResult, hashing: Embedder) -> None:
    snap = trained.snapshot
    assert snap["format"] == FORMAT == "scoring-workbench/snapshot"
    assert snap["format_version"] == FORMAT_VERSION == 1
    assert snap["scoring_method"] == "balanced_cosine"
    assert snap["embedder"] == {"id": hashing.id, "dim": hashing.dim, "model_sha256": None}
    assert snap["param_hash"] == trained.param_hash
    (trait,) = snap["traits"]
    assert {
        "key",
        "name",
        "positive_label",
        "negative_label",
        "description",
        "aggregation",
        "w",
        "m_dot_w",
        "k",
        "params",
    } <= set(trait)
    assert len(trait["w"]) == hashing.dim and trait["k"] > 0
    assert trait["params"] == trained.params["sentiment"]
    json.dumps(snap, allow_nan=False)


def test_minilm_snapshot_records_the_model_hash() -> None:
    from core.embedders.minilm import MINILM_ID, MODEL_SHA256
    from core.engine.snapshot import model_sha256

    class Named:  # only the id matters here; the model itself is never loaded
        id = MINILM_ID

    assert model_sha256(Named()) == MODEL_SHA256


def test_json_round_trip_gives_bit_identical_scores(trained: TrainingResult, hashing: Embedder) -> None:
    texts = ["the staff were wonderful", "our dinner was dreadful", " ".join(["lovely rude"] * 150)]
    direct = Scorer.from_snapshot(trained.snapshot, embedder=hashing).score(texts)
    restored = json.loads(json.dumps(trained.snapshot))
    assert restored == trained.snapshot
    again = Scorer.from_snapshot(restored, embedder=hashing).score(texts)
    from_string = Scorer.from_snapshot(json.dumps(trained.snapshot)).score(texts)
    assert np.array_equal(direct, again) and np.array_equal(direct, from_string)


def test_scorer_resolves_the_embedder_by_id(trained: TrainingResult, hashing: Embedder) -> None:
    scorer = Scorer.from_snapshot(trained.snapshot)
    assert scorer.embedder.id == hashing.id


def test_scorer_keeps_its_own_copy(trained: TrainingResult, hashing: Embedder) -> None:
    snap = copy.deepcopy(trained.snapshot)
    scorer = Scorer.from_snapshot(snap, embedder=hashing)
    before = scorer.score(["the staff were wonderful"])
    snap["traits"][0]["k"] = 1e-3
    snap["traits"][0]["w"][0] += 5.0
    assert np.array_equal(scorer.score(["the staff were wonderful"]), before)


def test_unknown_embedder_is_a_clear_error(trained: TrainingResult) -> None:
    snap = copy.deepcopy(trained.snapshot)
    snap["embedder"]["id"] = "word2vec-google-news"
    with pytest.raises(EmbedderUnavailableError, match="word2vec-google-news"):
        Scorer.from_snapshot(snap)


def test_a_different_embedder_than_the_snapshot_names_is_refused(trained: TrainingResult) -> None:
    with pytest.raises(EmbedderUnavailableError, match="hashing-v1-256"):
        Scorer.from_snapshot(trained.snapshot, embedder=get_embedder("hashing-v1-256"))


def _broken(trained: TrainingResult, change: Any) -> dict[str, Any]:
    snap = copy.deepcopy(trained.snapshot)
    change(snap)
    return snap


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda s: s.update(format="onnx-model"), "found format 'onnx-model'"),
        (lambda s: s.pop("format"), "found no format field"),
        (lambda s: s.update(format_version=2), "found format_version 2"),
        (lambda s: s.pop("format_version"), "no format_version field"),
        (lambda s: s.update(scoring_method="random_forest"), "random_forest"),
        (lambda s: s.update(embedder={"dim": 512}), "embedder.id"),
        (lambda s: s["embedder"].update(dim="512"), "embedder.dim"),
        (lambda s: s.update(traits=[]), "traits must be a non-empty list"),
        (lambda s: s["traits"][0].update(w=[0.0] * 3), r"traits\[0\].w must be a list of 512"),
        (lambda s: s["traits"][0]["w"].__setitem__(7, "x"), r"traits\[0\].w\[7\]"),
        (lambda s: s["traits"][0].update(k=float("nan")), r"traits\[0\].k"),
        (lambda s: s["traits"][0].update(k=-1.0), "must be positive"),
        (lambda s: s["traits"][0].pop("m_dot_w"), "m_dot_w"),
        (lambda s: s["traits"][0].update(aggregation="median"), "median"),
        (lambda s: s["traits"][0].pop("name"), r"traits\[0\].name"),
        (lambda s: s["traits"].append(copy.deepcopy(s["traits"][0])), "appears twice"),
        (lambda s: s.update(chunk_words=0), "chunk_words"),
    ],
)
def test_malformed_snapshots_raise_snapshot_format_error(
    trained: TrainingResult, change: Any, needle: str
) -> None:
    snap = _broken(trained, change)
    with pytest.raises(SnapshotFormatError, match=needle):
        load_snapshot(snap)
    with pytest.raises(SnapshotFormatError):
        Scorer.from_snapshot(snap)


@pytest.mark.parametrize(
    ("value", "needle"), [("{not json", "not valid JSON"), ("[1, 2]", "found list"), (42, "found int")]
)
def test_non_snapshot_values_are_rejected(value: Any, needle: str) -> None:
    with pytest.raises(SnapshotFormatError, match=needle):
        load_snapshot(value)


def test_snapshot_error_code_is_stable() -> None:
    with pytest.raises(SnapshotFormatError) as info:
        load_snapshot({"format": "other"})
    assert info.value.code == "snapshot_format"
    assert isinstance(info.value, ValueError)
