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
from tests.app.support import formality_samples


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
    assert set(mislabel) == {"id", "trait", "flag", "text", "quality", "oof_score", "why"}
    assert mislabel["why"].startswith(f"labelled positive, held-out score {mislabel['oof_score']:.2f}; ")
    assert mislabel["why"].endswith(" of its 10 nearest samples are negative")


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
