"""Sample flags (`core.engine.flags`): planted mislabels and outliers found, near-duplicates spared."""

from __future__ import annotations

import numpy as np

from core.embedders import get_embedder
from core.engine.flags import flag_samples, knn_similarity, robust_z
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
