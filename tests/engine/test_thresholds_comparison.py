"""Thresholds for a target precision/recall, and the paired comparison of two versions on the same items."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from core.engine.comparison import compare_trait
from core.engine.thresholds import choose_threshold, pr_curve
from tests.engine.test_evaluation import _data


def test_threshold_meets_its_target_and_matches_sklearn() -> None:
    s, q = _data(1000, 0.2, 3)
    cases: tuple[tuple[Literal["precision", "recall"], float], ...] = (
        ("precision", 0.9),
        ("recall", 0.9),
        ("precision", 0.75),
    )
    for target, value in cases:
        chosen = choose_threshold(s, q, target, value)
        assert chosen is not None
        pred = s >= chosen["threshold"]
        precision, recall = precision_score(q, pred), recall_score(q, pred)
        assert abs(precision - chosen["precision"]) < 1e-6 and abs(recall - chosen["recall"]) < 1e-6
        assert {"precision": precision, "recall": recall}[target] >= value
    # A stricter precision target costs recall.
    loose, strict = choose_threshold(s, q, "precision", 0.75), choose_threshold(s, q, "precision", 0.95)
    assert (
        loose and strict and strict["threshold"] > loose["threshold"] and strict["recall"] < loose["recall"]
    )


def test_unreachable_target_and_curve_shape() -> None:
    s = np.array([0.9, 0.8, 0.7, 0.2])
    q = np.array([0.0, 1.0, 1.0, 0.0])  # the top score is a negative: precision 1 only at recall 0
    assert choose_threshold(s, q, "precision", 1.0) is None
    assert choose_threshold(np.array([0.3, 0.6]), np.array([1.0, 1.0]), "recall", 0.5) is None  # one side
    s, q = _data(3000, 0.2, 4)
    points = pr_curve(s, q, max_points=100)
    assert len(points) <= 100
    thresholds = [p["threshold"] for p in points]
    assert thresholds == sorted(thresholds) and points[0]["recall"] == 1.0
    recalls = [p["recall"] for p in points]
    assert recalls == sorted(recalls, reverse=True)


def test_paired_comparison_values_and_significance() -> None:
    s_good, q = _data(800, 0.15, 5)
    rng = np.random.default_rng(6)
    s_bad = np.clip(s_good + rng.normal(0, 0.25, len(q)), 0, 1)
    r = compare_trait(q, s_bad, s_good)
    assert abs(r["roc_auc"]["a"] - roc_auc_score(q, s_bad)) < 1e-6
    assert abs(r["roc_auc"]["b"] - roc_auc_score(q, s_good)) < 1e-6
    assert abs(r["accuracy"]["b"] - accuracy_score(q, s_good >= 0.5)) < 1e-6
    assert abs(r["f1"]["a"] - f1_score(q, s_bad >= 0.5)) < 1e-6
    for name in ("roc_auc", "accuracy", "f1"):
        m = r[name]
        assert abs(m["difference"] - (m["b"] - m["a"])) < 1e-5
        assert m["ci_low"] <= m["difference"] <= m["ci_high"]
        assert m["significant"] and m["difference"] > 0 and m["p_value"] < 0.05, (name, m)
    # The same version twice: no difference, nothing significant.
    same = compare_trait(q, s_good, s_good)
    for name in ("roc_auc", "accuracy", "f1", "calibration_error"):
        assert same[name]["difference"] == 0 and not same[name]["significant"], name
    assert sum(b["count"] for b in r["reliability_a"]) == len(q)
    # A thresholds shifts that version's decisions only.
    shifted = compare_trait(q, s_good, s_good, threshold_b=0.9)
    assert shifted["accuracy"]["difference"] < 0 and shifted["roc_auc"]["difference"] == 0


def test_paired_bootstrap_repeats_with_its_seed_and_p_value_is_never_zero() -> None:
    s_good, q = _data(400, 0.15, 7)
    s_bad = np.clip(s_good + np.random.default_rng(8).normal(0, 0.3, len(q)), 0, 1)
    r = compare_trait(q, s_bad, s_good)
    again, other = compare_trait(q, s_bad, s_good), compare_trait(q, s_bad, s_good, seed=1)
    for name in ("accuracy", "f1", "calibration_error"):
        assert again[name] == pytest.approx(r[name], abs=1e-9), name  # the seed fixes the resamples
        assert 0 < r[name]["p_value"] <= 1  # (k + 1) / (n + 1): never exactly 0
    assert any(other[n]["ci_low"] != r[n]["ci_low"] for n in ("accuracy", "f1", "calibration_error"))
