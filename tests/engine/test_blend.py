"""A model on both embedders (`blend`): trained as one model an embedder, scored by the mean of their scores
from one snapshot (JSON round trip, explanations, a refused malformed blend), reusing its parameters; `auto`'s
rule for it; and what a version on it, or on one embedder that led by too little or rests on few labels, says
in words. Hashing embedders of two sizes stand in for the embedders: nothing here loads a real one."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from core.embedder_words import embedder_words
from core.embedders.blend import BLEND_ID, BlendEmbedder
from core.embedders.hashing import HashingEmbedder
from core.embedders.registry import choice_id, embedder_id, short_name
from core.engine import Sample, Scorer, TraitSpec, train
from core.engine.blend import part_params, train_blend
from core.engine.embedder_choice import Candidate, ChosenEmbedder, blend_refused_because, recorded_choice
from core.engine.errors import SnapshotFormatError
from core.engine.snapshot import load_snapshot

TRAIT = TraitSpec("tone", "Tone", "polite", "rude", description="Polite texts thank. Rude texts insult.")
POLITE = [
    "thank you so much kindly",
    "please could you help me",
    "thanks a lot my friend",
    "would you mind please",
]
RUDE = ["shut up you idiot", "you are useless and slow", "go away you fool", "this is stupid garbage"]
SAMPLES = [Sample("tone", t, 1.0) for t in POLITE * 2] + [Sample("tone", t, 0.0) for t in RUDE * 2]
TEXTS = ["thanks please", "idiot", "hello there my friend", "word " * 450]  # the last one in chunks


@pytest.fixture(scope="module")
def embedders() -> tuple[HashingEmbedder, HashingEmbedder]:
    return HashingEmbedder(64), HashingEmbedder(128)


def test_a_blend_scores_the_mean_of_its_embedders_models_from_one_snapshot(embedders: tuple) -> None:
    small, large = embedders
    blend = BlendEmbedder([small, large])
    assert blend.id == f"blend:{small.id}+{large.id}" and blend.dim == 192
    result = train_blend([TRAIT], SAMPLES, embedder=blend, effort="low")
    snapshot = load_snapshot(json.dumps(result.snapshot))  # a JSON round trip scores the same
    scorer = Scorer.from_snapshot(snapshot, embedder=blend)
    alone = [
        Scorer.from_snapshot(train([TRAIT], SAMPLES, embedder=b, effort="low").snapshot, embedder=b).score(
            TEXTS
        )
        for b in embedders
    ]
    # The mean of the embedders' logits, recalibrated by the blend's own slope: not the mean of their scores,
    # which sits closer to 0.5 than the evidence of both models says (the texts of one chunk: a longer one's
    # chunks are each scored so, then aggregated).
    logits = [np.log(a[:3] / (1.0 - a[:3])) for a in alone]
    k = result.snapshot["traits"][0]["k"]
    expected = 1.0 / (1.0 + np.exp(-k * (logits[0] + logits[1]) / 2))
    assert np.abs(scorer.score(TEXTS[:3]) - expected).max() < 1e-9
    # Explanations read the blend's score: the words' contributions add up to it less 0.5.
    words = scorer.explain("thank you, you idiot")["tone"]
    assert sum(w.contribution for w in words) == pytest.approx(
        scorer.score("thank you, you idiot")[0, 0] - 0.5
    )
    # Its figures: the blend's own out-of-fold ROC-AUC and standard error, each embedder's beside them.
    metrics = result.metrics["tone"]
    assert 0.5 <= metrics["roc_auc"] <= 1.0 and metrics["roc_auc_se"] is not None
    slope = metrics["calibration_slope"]  # none where the poles never overlap (core.engine.metrics)
    assert (slope is None) == (metrics["roc_auc"] == 1.0) and (slope is None or slope > 0)
    assert 0 <= metrics["calibration_error"] <= 1
    assert [b["embedder"] for b in metrics["embedders"]] == [small.id, large.id]
    assert metrics["positive_samples"] == metrics["negative_samples"] == 8
    # A retraining that reuses the version's parameters trains each embedder on its own and gives the same
    # model.
    again = train_blend([TRAIT], SAMPLES, embedder=blend, effort="low", params=result.params)
    assert again.snapshot == result.snapshot
    # A version stored before the rename keeps each embedder's parameters under "bodies": reused alike.
    stored = {key: {"bodies": value["embedders"]} for key, value in result.params.items()}
    assert all(part_params(stored, i, 2) == part_params(result.params, i, 2) is not None for i in (0, 1))


def test_a_malformed_blend_snapshot_is_refused_by_name(embedders: tuple) -> None:
    blend = BlendEmbedder(list(embedders))
    snapshot = train_blend([TRAIT], SAMPLES, embedder=blend, effort="low").snapshot
    other = copy.deepcopy(snapshot)
    other["embedder"]["id"] = f"blend:{embedders[1].id}+{embedders[0].id}"
    with pytest.raises(SnapshotFormatError, match="does not name its parts' embedders"):
        load_snapshot(other)
    short = copy.deepcopy(snapshot)
    short["parts"] = short["parts"][:1]
    with pytest.raises(SnapshotFormatError, match="at least two snapshots"):
        load_snapshot(short)
    wrong = copy.deepcopy(snapshot)
    wrong["parts"][1]["traits"][0]["w"] = [0.0] * 3
    with pytest.raises(SnapshotFormatError, match=r"traits\[0\]\.w must be a list of 128 numbers"):
        load_snapshot(wrong)
    with pytest.raises(
        Exception, match="trained with embedder 'blend:hashing-v1-64"
    ):  # only by its embedders
        Scorer.from_snapshot(snapshot, embedder=BlendEmbedder([embedders[0], embedders[0]]))


def test_auto_takes_both_embedders_on_english_texts_of_three_words_or_more() -> None:
    english = [Sample("tone", t, 1.0) for t in POLITE]
    assert blend_refused_because(english, ["en"] * 4, BLEND_ID) is None
    assert blend_refused_because(english, [], BLEND_ID) is None  # nothing detected: counts for every embedder
    short = [Sample("tone", t, 1.0) for t in ("thanks", "great work", "ok")]
    assert blend_refused_because(short, ["en"] * 3, BLEND_ID) == "short texts: a median of 1 words, under 3"
    said = blend_refused_because(english, ["de", "de", "en", "fr"], BLEND_ID)
    assert said == "most samples are not in English, which mpnet-base reads"


def test_blend_is_a_embedder_by_name_and_by_id() -> None:
    assert embedder_id("blend") == BLEND_ID and short_name(BLEND_ID) == "blend"
    from core.embedders.mpnet_source import installed

    if installed():
        assert choice_id("blend") == choice_id(BLEND_ID) == BLEND_ID


def test_a_version_says_its_embedder_in_words() -> None:
    both = {"blend": 0.93, "e5-small-qint8": 0.90, "mpnet-base": 0.91}
    assert embedder_words("blend", both) == (
        "trained on both embedders (e5-small-qint8 and mpnet-base, the mean of their scores): "
        "out-of-fold 0.93; alone 0.90 on e5-small-qint8, 0.91 on mpnet-base"
    )
    # A larger embedder that led by less than a switch needs: the rule is said, not two equal-looking figures.
    close = {"e5-small-qint8": 0.811, "mpnet-base": 0.813}
    assert embedder_words("e5-small-qint8", close, tie=0.02) == (
        "trained on e5-small-qint8: out-of-fold 0.81 against 0.81 on mpnet-base "
        "(mpnet-base led by 0.002, under the 0.02 a switch needs)"
    )
    # Few labels: a standard error near 0.1 is said; a firm figure is not.
    assert embedder_words("e5-small-qint8", {"e5-small-qint8": 0.8}, se=0.1) == (
        "trained on e5-small-qint8 (few labels: the out-of-fold figure is ± 0.10, a rough guide)"
    )
    assert embedder_words("e5-small-qint8", {"e5-small-qint8": 0.8}, se=0.02) == "trained on e5-small-qint8"
    kept = embedder_words(
        "e5-small-qint8", not_compared=["blend"], because="short texts: a median of 2 words"
    )
    assert kept == "trained on e5-small-qint8 (not on both embedders: short texts: a median of 2 words)"


def test_a_blend_choice_records_its_figure_and_each_embedders(embedders: tuple) -> None:
    blend = BlendEmbedder(list(embedders))
    result = train_blend([TRAIT], SAMPLES, embedder=blend, effort="low")
    choice = ChosenEmbedder(None, blend.id, (), ()).trained(result)
    recorded = choice.as_json()
    # Nothing was compared: the version's own figures, no comparison's candidates, tie or sample count.
    assert not {"candidates", "tie", "compared_on"} & recorded.keys()
    figures = recorded["out_of_fold"]
    assert isinstance(figures, list)
    assert [c["embedder"] for c in figures] == [blend.id, embedders[0].id, embedders[1].id]
    assert figures[0]["roc_auc"] == result.metrics["tone"]["roc_auc"]
    assert choice.out_of_fold[0] == Candidate(
        blend.id, result.metrics["tone"]["roc_auc"], result.metrics["tone"]["roc_auc_se"]
    )
    assert recorded_choice({"embedder_choice": recorded}) == recorded
    # A version stored before: under `body_choice`, the figures as `candidates` with a tie and a count.
    old = {"chosen": blend.id, "tie": 0.02, "candidates": figures, "compared_on": 16, "not_compared": []}
    assert recorded_choice({"body_choice": old}) == {
        "chosen": blend.id,
        "out_of_fold": figures,
        "not_compared": [],
    }
    compared = {**old, "chosen": embedders[1].id, "candidates": figures[1:]}  # a comparison stays one
    assert recorded_choice({"body_choice": compared}) == compared


def test_a_blend_trained_before_its_own_slope_scores_the_mean_of_its_embedders_scores(
    embedders: tuple,
) -> None:
    """A stored blend snapshot without the blend's slope (trained before it, its method named
    `blend_of_bodies`) scores as it always did: the mean of the embedders' scores, so its thresholds keep
    their meaning."""
    blend = BlendEmbedder(list(embedders))
    snapshot = copy.deepcopy(train_blend([TRAIT], SAMPLES, embedder=blend, effort="low").snapshot)
    snapshot["scoring_method"] = "blend_of_bodies"  # the method's name then
    for trait in snapshot["traits"]:
        del trait["k"]
    scorer = Scorer.from_snapshot(load_snapshot(snapshot), embedder=blend)
    parts = [
        Scorer.from_snapshot(p, embedder=b).score(TEXTS)
        for p, b in zip(snapshot["parts"], embedders, strict=True)
    ]
    assert np.abs(scorer.score(TEXTS) - (parts[0] + parts[1]) / 2).max() < 1e-12
