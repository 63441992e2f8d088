"""Two versions scored on the same evaluation items: metric differences B − A and their significance.

Paired tests, since both versions scored the very same items: ROC-AUC by DeLong's test for correlated AUCs
(`paired_auc_difference`); accuracy, F1 and calibration error by a paired bootstrap (each resample draws the
same items for A and B, so the item-to-item difficulty cancels out of B − A; `scipy.stats.bootstrap` draws
them, through `core.engine.evaluation.paired_bootstrap`). Definitions: docs/engine-evaluation.md.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from core.contract import DEFAULT_DECISION_THRESHOLD
from core.engine.evaluation import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    Resampled,
    delong_auc,
    paired_auc_difference,
    paired_bootstrap,
    reliability,
)
from core.engine.metrics import both_sides, expected_calibration_error, f1, sides
from core.engine.types import JsonObject


def _difference(a: float, b: float, boot: Resampled) -> JsonObject:
    """B − A with its percentile interval and a two-sided bootstrap p-value."""
    # (k + 1) / (n + 1): a bootstrap p-value is never exactly 0 with finitely many resamples.
    n, values = len(boot.values), boot.values
    p = min(1.0, 2 * (min(int((values <= 0).sum()), int((values >= 0).sum())) + 1) / (n + 1))
    return _entry(a, b, b - a, boot.low, boot.high, p)


def _accuracy_gain(pa: np.ndarray, pb: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    y = y.astype(bool)
    return np.asarray(np.mean(pb.astype(bool) == y, axis=axis) - np.mean(pa.astype(bool) == y, axis=axis))


def _f1_gain(pa: np.ndarray, pb: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    y = y.astype(bool)
    return np.asarray(
        f1(pb.astype(bool), y) - f1(pa.astype(bool), y)
    )  # f1 works along the last axis, the items'


def _ece_change(a: np.ndarray, b: np.ndarray, quality: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(expected_calibration_error(b, quality) - expected_calibration_error(a, quality))


def _entry(a: float, b: float, diff: float, low: float, high: float, p: float) -> JsonObject:
    return {
        "a": round(a, 6),
        "b": round(b, 6),
        "difference": round(diff, 6),
        "ci_low": round(low, 6),
        "ci_high": round(high, 6),
        "p_value": round(p, 6),
        "significant": bool(low > 0 or high < 0),  # the 95% interval of B − A leaves out 0
    }


def compare_trait(
    quality: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    threshold_a: float = DEFAULT_DECISION_THRESHOLD,
    threshold_b: float = DEFAULT_DECISION_THRESHOLD,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> JsonObject:
    """Metrics of A and B on the same items, B − A, 95% intervals, p-values; reliability bins of each."""
    quality = np.asarray(quality, dtype=float)
    a = np.clip(np.asarray(a, dtype=float), 0.0, 1.0)
    b = np.clip(np.asarray(b, dtype=float), 0.0, 1.0)
    mask, y = sides(quality)
    yb = y.astype(bool)
    out: JsonObject = {
        "items": len(quality),
        "positive": int(y.sum()),
        "negative": int(len(y) - y.sum()),
        "neutral": int(len(quality) - len(y)),  # left out of ROC-AUC, accuracy and F1, as in an evaluation
        "threshold_a": threshold_a,
        "threshold_b": threshold_b,
        "reliability_a": reliability(a, quality),
        "reliability_b": reliability(b, quality),
    }
    if both_sides(y):
        test = paired_auc_difference(y, a[mask], b[mask])
        z = norm.ppf(1 - (1 - CONFIDENCE) / 2)
        diff, se = test["difference"], test["se"]
        auc_a, auc_b = delong_auc(y, a[mask])[0], delong_auc(y, b[mask])[0]
        out["roc_auc"] = _entry(auc_a, auc_b, diff, diff - z * se, diff + z * se, test["p_value"])
    else:
        out["roc_auc"] = None  # needs both sides
    # One generator, drawn from in a fixed order: a rerun with the same seed gives the same intervals.
    rng = np.random.default_rng(seed)
    if len(y):
        pa, pb = a[mask] >= threshold_a, b[mask] >= threshold_b
        out["accuracy"] = _difference(
            float((pa == yb).mean()),
            float((pb == yb).mean()),
            paired_bootstrap((pa, pb, yb), _accuracy_gain, resamples=resamples, rng=rng),
        )
        out["f1"] = _difference(
            float(f1(pa, yb)),
            float(f1(pb, yb)),
            paired_bootstrap((pa, pb, yb), _f1_gain, resamples=resamples, rng=rng),
        )
    else:
        out["accuracy"] = out["f1"] = None  # every item is neutral: no pole to be right about
    out["calibration_error"] = _difference(
        float(expected_calibration_error(a, quality)),
        float(expected_calibration_error(b, quality)),
        paired_bootstrap((a, b, quality), _ece_change, resamples=resamples, rng=rng),
    )
    return out
