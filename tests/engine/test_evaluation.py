"""Evaluation-set metrics: values agree with scikit-learn, intervals cover them, DeLong's paired test."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from core.engine.evaluation import evaluate_trait, paired_auc_difference
from core.engine.metrics import expected_calibration_error


def _data(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 2, n).astype(float)
    return np.clip(0.5 + 0.3 * (q - 0.5) + rng.normal(0, noise, n), 0, 1), q


def test_metrics_match_sklearn_with_intervals() -> None:
    s, q = _data(2000, 0.2, 1)
    r = evaluate_trait(s, q, threshold=0.5)
    assert (r["items"], r["positive"] + r["negative"]) == (2000, 2000)
    assert abs(r["roc_auc"]["value"] - roc_auc_score(q, s)) < 1e-6
    assert abs(r["accuracy"]["value"] - accuracy_score(q, s >= 0.5)) < 1e-6
    assert abs(r["f1"]["value"] - f1_score(q, s >= 0.5)) < 1e-6
    assert abs(r["calibration_error"]["value"] - expected_calibration_error(s, q)) < 1e-6
    for name in ("roc_auc", "accuracy", "f1", "calibration_error"):
        m = r[name]
        assert m["ci_low"] <= m["value"] <= m["ci_high"] and m["ci_high"] - m["ci_low"] < 0.1
    assert sum(b["count"] for b in r["reliability"]) == 2000
    # A smaller set has wider intervals.
    small = evaluate_trait(s[:200], q[:200])
    assert (
        small["roc_auc"]["ci_high"] - small["roc_auc"]["ci_low"]
        > r["roc_auc"]["ci_high"] - r["roc_auc"]["ci_low"]
    )


def test_one_sided_set_has_no_auc() -> None:
    r = evaluate_trait(np.array([0.2, 0.9, 0.7]), np.array([1.0, 1.0, 1.0]))
    assert r["roc_auc"] is None and r["negative"] == 0 and abs(r["accuracy"]["value"] - 2 / 3) < 1e-6


def test_paired_delong_detects_a_real_difference_only() -> None:
    s, q = _data(3000, 0.2, 2)
    worse = np.clip(s + np.random.default_rng(3).normal(0, 0.15, len(s)), 0, 1)
    test = paired_auc_difference(q, s, worse)
    assert test["difference"] < 0 and test["p_value"] < 0.001
    assert abs(test["difference"] - (roc_auc_score(q, worse) - roc_auc_score(q, s))) < 1e-9
    same = paired_auc_difference(q, s, s)
    assert same["difference"] == 0 and same["p_value"] == 1.0


def test_calibration_error_interval_holds_its_value() -> None:
    # Well-calibrated scores (each label drawn with its score's probability): the ECE is small, and resampling
    # only inflates it, so a plain percentile interval of the resampled ECEs lay wholly above the value.
    for seed in range(6):
        rng = np.random.default_rng(seed)
        s = rng.uniform(0, 1, 300)
        q = (rng.uniform(0, 1, 300) < s).astype(float)
        m = evaluate_trait(s, q)["calibration_error"]
        assert 0.0 <= m["ci_low"] <= m["value"] <= m["ci_high"], (seed, m)
        assert m["ci_high"] - m["ci_low"] > 0.01  # still an interval, not the value alone


def test_bootstrap_intervals_are_95_percent_and_repeat_with_their_seed() -> None:
    # An accuracy's percentile bootstrap interval at 95 % sits where the normal approximation of a
    # proportion puts it (n = 2000: ± 1.96·√(p(1 − p)/n) ≈ ± 0.018), within the resampling's own noise.
    s, q = _data(2000, 0.2, 1)
    r = evaluate_trait(s, q)
    p = r["accuracy"]["value"]
    half = 1.96 * np.sqrt(p * (1 - p) / 2000)
    assert abs(r["accuracy"]["ci_low"] - (p - half)) < 0.006, r["accuracy"]
    assert abs(r["accuracy"]["ci_high"] - (p + half)) < 0.006, r["accuracy"]
    # The seed fixes the resamples: a rerun gives the same intervals, another seed other ones.
    again, other = evaluate_trait(s, q), evaluate_trait(s, q, seed=1)
    for name in ("accuracy", "f1", "calibration_error"):
        assert again[name] == pytest.approx(r[name], abs=1e-9), name
    assert any(other[n]["ci_low"] != r[n]["ci_low"] for n in ("accuracy", "f1", "calibration_error"))


def test_one_item_is_its_own_interval() -> None:
    # Nothing to resample (SciPy's bootstrap needs two items): the value alone, not an error.
    r = evaluate_trait(np.array([0.9]), np.array([1.0]))
    for name in ("accuracy", "f1", "calibration_error"):
        assert r[name]["ci_low"] == r[name]["value"] == r[name]["ci_high"], (name, r[name])
