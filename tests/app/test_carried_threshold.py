"""An earlier version's threshold read against a newer version's precision-recall curve: what it does there
and which threshold meets its target there, as the service would choose it. The curves are the engine's own
(`core.engine.thresholds`), read through the client's model."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.carried_threshold import (
    at_threshold,
    carried_sentence,
    carried_threshold,
    earlier_refs,
    meeting_target,
)
from core.client import PrPoint, Threshold
from core.engine.thresholds import choose_threshold, pr_curve


def scored(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray, list[PrPoint]]:
    rng = np.random.default_rng(seed)
    quality = rng.integers(0, 2, n).astype(float)
    scores = np.clip(0.3 * quality + rng.uniform(0, 0.7, n), 0, 1).round(6)
    return scores, quality, [PrPoint.model_validate(p) for p in pr_curve(scores, quality)]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_target_is_met_as_the_service_would_choose(seed: int) -> None:
    scores, quality, points = scored(seed)
    for target in ("precision", "recall"):
        for value in (0.5, 0.8, 0.95):
            chosen = choose_threshold(scores, quality, target, value)
            found = meeting_target(points, target, value)
            if chosen is None:
                assert found is None
                continue
            assert found is not None
            assert found.threshold == round(chosen["threshold"], 6)  # what set_threshold stores
            assert (found.precision, found.recall) == (chosen["precision"], chosen["recall"])


def test_an_old_threshold_decides_the_new_scores_as_the_curve_says() -> None:
    scores, quality, points = scored(2)
    positive = quality >= 0.5
    for t in (0.1234, 0.5, 0.77, float(scores.max())):
        decided = scores >= t
        precision, recall = at_threshold(points, t)
        assert precision == pytest.approx((decided & positive).sum() / decided.sum(), abs=1e-6)
        assert recall == pytest.approx((decided & positive).sum() / positive.sum(), abs=1e-6)
    assert at_threshold(points, float(scores.max()) + 0.01) == (None, 0.0)  # no score reaches it


def test_the_sentence_says_both_and_what_cannot_be_reached() -> None:
    points = [
        PrPoint(threshold=0.3, precision=0.6, recall=1.0),
        PrPoint(threshold=0.612, precision=0.84, recall=0.71),
        PrPoint(threshold=0.688, precision=0.9, recall=0.66),
        PrPoint(threshold=0.8, precision=0.95, recall=0.4),
    ]
    old = Threshold(threshold=0.612, target="precision", value=0.9)
    carried = carried_threshold("v2", old, points)
    assert carried_sentence("v3", carried) == (
        "v2's threshold 0.612 (precision ≥ 0.9) on v3's evaluation: precision 0.84, recall 0.71 — the "
        "threshold meeting precision ≥ 0.9 on v3 is 0.688 (precision 0.90, recall 0.66)."
    )
    unreachable = carried_threshold("v1", Threshold(threshold=0.9, target="precision", value=0.99), points)
    assert carried_sentence("v3", unreachable) == (
        "v1's threshold 0.900 (precision ≥ 0.99) on v3's evaluation: no item scores that high (recall 0) — "
        "no threshold reaches precision ≥ 0.99 on v3."
    )
    assert unreachable.meeting is None


def test_earlier_versions_newest_first() -> None:
    refs = ["v10", "v3", "v9", "v1"]
    assert earlier_refs(refs, "v9") == ["v3", "v1"]
    assert earlier_refs(refs, "v10") == ["v9", "v3", "v1"]
    assert earlier_refs(refs, "v1") == []
