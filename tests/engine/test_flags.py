"""Sample flags (`core.engine.flags`): planted mislabels and outliers found, near-duplicates spared."""

from __future__ import annotations

import numpy as np
import pytest

from core.embedders import get_embedder
from core.engine.flags import (
    flag_samples,
    knn_similarity,
    likely_mislabelled,
    mislabel_evidence,
    nearest_neighbours,
    neighbour_votes,
    oof_scores,
    robust_z,
)
from tests.support.app import formality_samples


def test_flags_find_a_planted_mislabel_and_an_outlier() -> None:
    rows = [dict(r, id=i) for i, r in enumerate(formality_samples())]
    rows.append(
        {"id": 100, "trait": "formality", "text": "lol haha dude see ya yo wanna chill", "quality": 1.0}
    )
    rows.append({"id": 101, "trait": "formality", "text": "zzzq xxyv qqwp vvbn", "quality": 0.0})
    flagged = flag_samples(rows, get_embedder("hashing"))
    by_id = {(f["id"], f["flag"]) for f in flagged}
    assert (100, "likely mislabelled") in by_id
    assert (101, "outlier") in by_id
    assert not any(f["id"] < 100 and f["flag"] == "likely mislabelled" for f in flagged)
    # The row the Flags tab shows keeps its fields; the reason names both signals.
    mislabel = next(f for f in flagged if f["id"] == 100 and f["flag"] == "likely mislabelled")
    assert set(mislabel) == {"id", "trait", "flag", "text", "quality", "oof_score", "why", "votes", "spread"}
    assert mislabel["votes"] == [{"annotator": None, "quality": 1.0, "sample_id": 100}]
    assert mislabel["spread"] == 0.0
    assert mislabel["why"].startswith(f"labelled positive, held-out score {mislabel['oof_score']:.2f}; ")
    assert mislabel["why"].endswith(" of its 10 nearest samples are negative")


CASUAL_TEXT = "lol haha dude see ya yo wanna chill"  # the formality samples' casual register


def test_a_neutral_sample_is_never_likely_mislabelled() -> None:
    """Quality 0.5 used to count as the positive pole: a casual text rated neutral was "labelled positive"
    and flagged against it, like the planted mislabel above. A neutral label claims neither pole."""
    rows = [dict(r, id=i) for i, r in enumerate(formality_samples())]
    rows.append({"id": 100, "trait": "formality", "text": CASUAL_TEXT, "quality": 0.5})
    flagged = [f for f in flag_samples(rows, get_embedder("hashing")) if f["id"] == 100]
    assert [f["flag"] for f in flagged if f["flag"] == "likely mislabelled"] == []
    # Not held out either: the out-of-fold model is fitted on the pole samples, and scores only them.
    q = np.array([float(r["quality"]) for r in rows])
    X = get_embedder("hashing").encode([str(r["text"]) for r in rows]).astype(np.float64)
    oof = oof_scores(X, q)
    assert oof is not None and np.isnan(oof[-1]) and not np.isnan(oof[:-1]).any()
    _, neighbours = nearest_neighbours(X, 10)
    assert mislabel_evidence(q, oof, neighbours)[-1] == 0.0
    assert neighbour_votes(q, neighbours)[-1] == 0.0
    # Nor does a neutral neighbour speak against a label: it is on neither pole.
    assert neighbour_votes(np.array([1.0, 0.5, 0.0]), np.array([[1, 2], [0, 2], [1, 0]])).tolist() == [
        0.5,
        0.0,
        0.5,
    ]


def _with_votes(*votes: tuple[str | None, float, bool]) -> list[dict[str, object]]:
    """The clean formality samples, then one casual text voted by several annotators (annotator, quality,
    adjudicated), ids from 100 in order."""
    rows: list[dict[str, object]] = [dict(r, id=i) for i, r in enumerate(formality_samples())]
    for j, (annotator, quality, adjudicated) in enumerate(votes):
        rows.append(
            {
                "id": 100 + j,
                "trait": "formality",
                "text": CASUAL_TEXT,
                "quality": quality,
                "annotator": annotator,
                "adjudicated": adjudicated,
            }
        )
    return rows


def test_a_text_whose_votes_disagree_is_contested_never_likely_mislabelled() -> None:
    # Two of three annotators call the casual text formal: the counted quality (2/3) is on the formal pole,
    # and the evidence against it is the planted mislabel's above (both signals read the pole only, and
    # three agreeing formal votes are flagged below); but the votes disagree.
    rows = _with_votes(("alice", 1.0, False), ("bob", 0.0, False), ("carol", 1.0, False))
    flagged = [f for f in flag_samples(rows, get_embedder("hashing")) if f["text"] == CASUAL_TEXT]
    assert [f["flag"] for f in flagged] == ["contested"]
    contested = flagged[0]
    assert contested["id"] == 100 and contested["quality"] == pytest.approx(2 / 3)
    assert contested["votes"] == [
        {"annotator": "alice", "quality": 1.0, "sample_id": 100},
        {"annotator": "bob", "quality": 0.0, "sample_id": 101},
        {"annotator": "carol", "quality": 1.0, "sample_id": 102},
    ]
    assert contested["spread"] == pytest.approx(np.std([1.0, 0.0, 1.0]))
    assert contested["why"] == (
        "votes on both poles: 2 positive, 1 negative (alice 1.00, bob 0.00, carol 1.00); spread 0.47"
    )
    assert contested["oof_score"] is not None and contested["oof_score"] < 0.5  # still shown beside it


def test_flags_count_votes_per_text_as_training_does() -> None:
    embedder = get_embedder("hashing")
    # Three annotators agree on the wrong pole: one text, one flag, all three votes on it.
    agreed = [f for f in flag_samples(_with_votes(*[(a, 1.0, False) for a in "abc"]), embedder)]
    mine = [f for f in agreed if f["text"] == CASUAL_TEXT]
    assert [f["flag"] for f in mine] == ["likely mislabelled"] and len(mine[0]["votes"]) == 3
    assert mine[0]["spread"] == 0.0
    # An annotator's latest vote counts: alice changed her mind to the casual pole, so nobody disagrees and
    # the text is labelled right.
    changed = flag_samples(
        _with_votes(("alice", 1.0, False), ("alice", 0.0, False), ("bob", 0.0, False)), embedder
    )
    assert not [f for f in changed if f["text"] == CASUAL_TEXT]
    # A reviewer settled it: the adjudicated vote decides the pole and the text is no longer contested.
    # Settled on the casual pole it is right; settled on the formal pole the evidence flags it again.
    settled = _with_votes(("alice", 1.0, False), ("bob", 0.0, False), ("rev", 0.0, True))
    assert not [f for f in flag_samples(settled, embedder) if f["text"] == CASUAL_TEXT]
    wrong = _with_votes(("alice", 1.0, False), ("bob", 0.0, False), ("rev", 1.0, True))
    assert [f["flag"] for f in flag_samples(wrong, embedder) if f["text"] == CASUAL_TEXT] == [
        "likely mislabelled"
    ]
    # Unattributed rows (stored before annotators existed) are votes of their own.
    old = _with_votes((None, 1.0, False), (None, 0.0, False))
    assert [f["flag"] for f in flag_samples(old, embedder) if f["text"] == CASUAL_TEXT] == ["contested"]


def test_a_small_trait_still_shows_its_contested_texts() -> None:
    # Too few texts for the out-of-fold model and the neighbours: only the votes speak.
    rows = [
        {"id": 1, "trait": "tone", "text": "fine", "quality": 1.0, "annotator": "alice"},
        {"id": 2, "trait": "tone", "text": "fine", "quality": 0.2, "annotator": "bob"},
        {"id": 3, "trait": "tone", "text": "go away", "quality": 0.0, "annotator": "alice"},
    ]
    flagged = flag_samples(rows, get_embedder("hashing"))
    assert [(f["id"], f["flag"], f["oof_score"]) for f in flagged] == [(1, "contested", None)]


def test_flags_never_call_near_duplicates_outliers() -> None:
    # Mostly near-duplicates of one long reply (only a number changes), so the median similarity is ~1
    # with almost no spread; a smaller family of short near-duplicates, correctly labelled; one odd text.
    long = (
        "Thank you for contacting our support team about your recent order; we have processed the refund "
        "and it will appear on your statement within three business days, reference {i}."
    )
    rows = [{"id": i, "trait": "tone", "text": long.format(i=i), "quality": 1.0} for i in range(40)]
    rows += [
        {"id": 100 + i, "trait": "tone", "text": f"not our problem, order {i} again", "quality": 0.0}
        for i in range(12)
    ]
    rows.append({"id": 999, "trait": "tone", "text": "zzzq xxyv qqwp vvbn", "quality": 0.0})
    seen: list[tuple[float, str]] = []
    flagged = flag_samples(rows, get_embedder("hashing"), lambda f, step: seen.append((f, step)))
    outliers = {f["id"] for f in flagged if f["flag"] == "outlier"}
    assert outliers == {999}, outliers  # the odd one out; none of the short family (z < -3 before)
    fractions = [f for f, _ in seen]  # progress from the start to the end, never backwards, with its steps
    assert fractions[0] == 0.0 and seen[-1] == (1.0, "") and fractions == sorted(fractions)
    assert [step.split()[0] for _, step in seen[:-1]] == ["Embedding", "Cross-validating", "Comparing"]
    assert seen[0][1] == "Embedding tone: 0 of 53 texts"


def test_knn_similarity_and_robust_z() -> None:
    X = np.eye(4)[[0, 0, 0, 1]].astype(float)
    sims = knn_similarity(X, k=1)
    assert list(sims) == [1.0, 1.0, 1.0, 0.0]
    assert robust_z(np.array([1.0, 1.0, 1.0])).tolist() == [0.0, 0.0, 0.0]


def test_a_mislabel_needs_the_held_out_score_and_the_neighbours_together_against_its_label() -> None:
    # Six samples: 0-2 positive, 3-5 negative; each row lists a sample's nearest samples.
    q = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    oof = np.array([0.10, 0.10, 0.60, 0.90, 0.20, 0.30])
    neighbours = np.array([[3, 4, 5], [2, 0, 3], [3, 4, 5], [0, 1, 2], [0, 1, 2], [4, 5, 3]])
    assert neighbour_votes(q, neighbours).tolist() == pytest.approx([1.0, 1 / 3, 1.0, 1.0, 1.0, 0.0])
    evidence = mislabel_evidence(q, oof, neighbours)
    assert evidence.tolist() == pytest.approx([0.95, 0.6167, 0.7, 0.95, 0.6, 0.15], abs=1e-4)
    # 0: scored 0.10 and every neighbour negative. 1: scored 0.10 but its neighbours mostly positive.
    # 2: every neighbour negative but scored 0.60, on its own side. 3: scored 0.90, neighbours positive.
    # 4: neighbours positive but scored 0.20, on its own side. 5: neither.
    assert likely_mislabelled(q, oof, neighbours).tolist() == [True, False, False, True, False, False]


def test_nearest_neighbours_come_most_similar_first_and_never_include_the_sample_itself() -> None:
    X = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.6, 0.8]])
    sims, index = nearest_neighbours(X, k=5)  # k is capped at n - 1
    assert index.shape == (4, 3) and index.tolist()[0] == [1, 3, 2]
    assert all(i not in row for i, row in enumerate(index.tolist()))
    assert np.all(np.diff(sims, axis=1) <= 0)


def test_oof_scores_see_through_a_flipped_label_and_need_two_samples_a_pole() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 0.5, (40, 8))
    X[:20, 0] += 3.0  # two clusters, apart on the first axis
    X[20:, 1] += 3.0
    q = np.array([1.0] * 20 + [0.0] * 20)
    q[0] = 0.0  # planted: a sample of the positive cluster labelled negative
    oof = oof_scores(X, q)
    assert oof is not None and oof.shape == (40,)
    # Each sample is scored by a model that never saw its label: the planted one looks positive.
    assert oof[0] > 0.5 and (oof[1:20] > 0.5).all() and (oof[20:] < 0.5).all()
    # Two samples on the smaller pole still give scores (as many folds as that pole has); one does not.
    assert oof_scores(X[:22], np.array([1.0] * 20 + [0.0] * 2)) is not None
    assert oof_scores(X[:21], np.array([1.0] * 20 + [0.0])) is None
