"""The client's evaluation-set methods against the real service."""

from __future__ import annotations

from typing import Any

import pytest

from core.client import NotFoundError, PermissionDeniedError
from tests.support.client import NEGATIVE, POSITIVE, Service, make_draft


def test_evaluation_set_round_trip(service: Service) -> None:
    # 600 items: two batches. Held-out texts are variations of the training poles.
    items = [
        {"trait": "formality", "text": f"{t} (item {i})", "quality": 1.0} for i in range(50) for t in POSITIVE
    ]
    items += [
        {"trait": "formality", "text": f"{t} ({i})", "quality": 0.0} for i in range(50) for t in NEGATIVE
    ]
    seen: list[tuple[int, int]] = []
    with service.client() as c:
        handle = make_draft(c, service.handle("evalset"))
        added = c.add_evaluation_items(handle, items, progress=lambda d, t: seen.append((d, t)))
        assert (added.added, added.total) == (600, 600)
        assert seen == [(500, 600), (600, 600)]
        again = c.add_evaluation_items(handle, items[:10])
        assert (again.added, again.total) == (0, 600)
        counts = c.evaluation_set(handle).traits
        assert {k: (v.positive, v.negative) for k, v in counts.items()} == {"formality": (300, 300)}
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        run = c.evaluate(handle, 1)
        assert run.state == "busy" and run.run_id
        model = c.wait(handle, run.run_id, timeout=60)
        assert model.state == "ready"
    with service.client("scorer") as c:
        result = c.get_evaluation(handle, "v1")
        with pytest.raises(PermissionDeniedError):
            c.evaluate(handle, 1)
    auc = result.traits["formality"].roc_auc
    assert auc is not None and auc.ci_low is not None and auc.ci_high is not None
    assert result.items == 600 and auc.value > 0.9 and auc.ci_low <= auc.value <= auc.ci_high
    with service.client() as c:
        assert c.clear_evaluation_set(handle).deleted == 600
    with service.client("outsider") as c, pytest.raises(NotFoundError):
        c.get_evaluation(handle, 1)


def test_thresholds_and_comparison_through_the_client(service: Service) -> None:
    items: list[dict[str, Any]] = [
        {"trait": "formality", "text": f"{t} (held {i})", "quality": 1.0} for i in range(3) for t in POSITIVE
    ]
    items += [
        {"trait": "formality", "text": f"{t} (held {i})", "quality": 0.0} for i in range(3) for t in NEGATIVE
    ]
    with service.client() as c:
        handle = make_draft(c, service.handle("evalthr"))
        c.add_evaluation_items(handle, items)
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        c.wait(handle, c.evaluate(handle, 1).run_id, timeout=60)
        points = c.pr_curve(handle, 1).traits["formality"].points
        assert points and points[0].recall == 1.0
        chosen = c.set_threshold(handle, "v1", "formality", target="recall", value=0.9)
        assert chosen.recall is not None and chosen.recall >= 0.9
        assert c.thresholds(handle, 1) == {"formality": chosen}
        scored = c.score(handle, items[0]["text"])
        c.wait(handle, c.train(handle, effort="low", reoptimize_params=True).run_id, timeout=60)
        c.wait(handle, c.evaluate(handle, 2).run_id, timeout=60)
        out = c.compare_evaluations(handle, 1, "v2", limit=3)
        assert (out.a.version_no, out.b.version_no, len(out.disagreements)) == (1, 2, 3)
        assert out.traits["formality"].items == len(items)
        table = out.to_frame()  # a row per trait and metric, as Evaluation.to_frame is a row per trait
        auc = out.traits["formality"].roc_auc
        assert auc is not None and table.loc[("formality", "roc_auc"), "difference"] == auc.difference
        assert {"a", "b", "difference", "ci_low", "ci_high", "p_value", "significant"} <= set(table.columns)
        assert repr(out).startswith("EvaluationComparison(v1 vs v2, ")
        assert c.clear_threshold(handle, 1, "formality") is True
        assert c.clear_threshold(handle, 1, "formality") is False
    assert scored.version_no == 1
    formality = next(x for x in scored.scores if x.trait == "formality")
    assert formality.threshold == chosen.threshold
    assert formality.decision is (formality.score >= chosen.threshold)
    with service.client("scorer") as c:
        assert c.pr_curve(handle, 1).version_no == 1
        with pytest.raises(PermissionDeniedError):
            c.set_threshold(handle, 1, "formality", target="precision", value=0.9)
        with pytest.raises(PermissionDeniedError):
            c.compare_evaluations(handle, 1, 2)
