"""A version's metrics on a labelled evaluation set, with confidence intervals (docs/engine-evaluation.md).

ROC-AUC's interval is DeLong's (its variance from the midrank structural components); accuracy, F1 and the
calibration error (ECE) get percentile bootstrap intervals from `scipy.stats.bootstrap` (`paired_bootstrap`;
the ECE's shifted by the bootstrap's bias).
`paired_auc_difference` is DeLong's test for two versions scored on the same items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap, norm, rankdata

from core.contract import DEFAULT_DECISION_THRESHOLD
from core.engine.metrics import CALIBRATION_BINS, both_sides, expected_calibration_error, f1, sides
from core.engine.types import JsonObject

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 500


def _components(y: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """AUC and DeLong's structural components (one per positive, one per negative)."""
    pos, neg = s[y == 1], s[y == 0]
    m, n = len(pos), len(neg)
    ranks = rankdata(np.concatenate([pos, neg]))
    v10 = (ranks[:m] - rankdata(pos)) / n  # per positive: share of negatives it outranks (ties count half)
    v01 = 1.0 - (ranks[m:] - rankdata(neg)) / m  # per negative: share of positives that outrank it
    return float(v10.mean()), v10, v01


def delong_auc(y: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """(AUC, standard error)."""
    auc, v10, v01 = _components(y, s)
    var = v10.var(ddof=1) / len(v10) + v01.var(ddof=1) / len(v01) if min(len(v10), len(v01)) > 1 else 0.0
    return auc, float(np.sqrt(max(var, 0.0)))


def paired_auc_difference(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """AUC(b) − AUC(a) on the same items, its standard error and two-sided p-value (DeLong 1988)."""
    auc_a, a10, a01 = _components(y, a)
    auc_b, b10, b01 = _components(y, b)
    d10, d01 = b10 - a10, b01 - a01
    var = d10.var(ddof=1) / len(d10) + d01.var(ddof=1) / len(d01) if min(len(d10), len(d01)) > 1 else 0.0
    se = float(np.sqrt(max(var, 0.0)))
    diff = auc_b - auc_a
    p = 1.0 if se == 0.0 else float(2 * norm.sf(abs(diff) / se))
    return {"difference": diff, "se": se, "p_value": p}


@dataclass(frozen=True)
class Resampled:
    """A statistic over bootstrap resamples of the items: its values and their percentile interval."""

    values: np.ndarray
    low: float
    high: float


def paired_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    resamples: int,
    rng: np.random.Generator,
) -> Resampled:
    """`statistic(*data, axis=-1)` over `resamples` of SciPy's bootstrap resamples of the items (the last
    axis), paired: each resample draws the same items from every array (a score with its label, A with B).
    The interval is the percentile one at `CONFIDENCE`. With fewer than two items there is nothing to
    resample (SciPy refuses): the one value is its own interval."""
    if data[0].shape[-1] < 2:
        value = float(statistic(*data, axis=-1))
        return Resampled(np.array([value]), value, value)
    result = bootstrap(
        data,
        statistic,
        n_resamples=resamples,
        paired=True,
        vectorized=True,
        axis=-1,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=rng,
    )
    interval = result.confidence_interval
    return Resampled(np.asarray(result.bootstrap_distribution), float(interval.low), float(interval.high))


def _interval(value: float, low: float, high: float) -> dict[str, float]:
    return {"value": round(value, 6), "ci_low": round(low, 6), "ci_high": round(high, 6)}


def _accuracy(pred: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(pred.astype(bool) == y.astype(bool), axis=axis))


def _f1(pred: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return f1(pred.astype(bool), y.astype(bool))  # f1 works along the last axis, where the items are


def _ece(scores: np.ndarray, quality: np.ndarray, axis: int = -1) -> np.ndarray:
    return expected_calibration_error(scores, quality)  # along the last axis, where the items are


def reliability(
    scores: np.ndarray, quality: np.ndarray, bins: int = CALIBRATION_BINS
) -> list[dict[str, float]]:
    """Per equal-width score bin with items: mean score, mean quality, count (the reliability diagram)."""
    which = np.minimum((scores * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        sel = which == b
        if sel.any():
            out.append(
                {
                    "bin_low": b / bins,
                    "mean_score": round(float(scores[sel].mean()), 6),
                    "mean_quality": round(float(quality[sel].mean()), 6),
                    "count": int(sel.sum()),
                }
            )
    return out


def evaluate_trait(
    scores: np.ndarray,
    quality: np.ndarray,
    threshold: float = DEFAULT_DECISION_THRESHOLD,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> JsonObject:
    """Metrics of one trait's scores against its evaluation labels (quality 0–1; ≥ threshold decides).

    Neutral items (quality 0.5) are on neither pole: counted (`neutral`) and left out of ROC-AUC, accuracy and
    F1, which need a pole to be right about; the calibration error and the reliability bins compare scores
    with qualities, so they keep every item. Without a pole item accuracy and F1 are None.
    """
    scores = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    quality = np.asarray(quality, dtype=float)
    mask, y = sides(quality)
    s = scores[mask]
    out: JsonObject = {
        "items": int(len(scores)),
        "positive": int(y.sum()),
        "negative": int(len(y) - y.sum()),
        "neutral": int(len(scores) - len(y)),
        "threshold": threshold,
        "reliability": reliability(scores, quality),
    }
    if both_sides(y):
        auc, se = delong_auc(y, s)
        z = norm.ppf(1 - (1 - CONFIDENCE) / 2)
        out["roc_auc"] = {
            "value": round(auc, 6),
            "ci_low": round(float(max(0.0, auc - z * se)), 6),
            "ci_high": round(float(min(1.0, auc + z * se)), 6),
        }
    else:
        out["roc_auc"] = None  # needs both sides
    # One generator, drawn from in a fixed order: a rerun with the same seed gives the same intervals.
    rng = np.random.default_rng(seed)
    if len(s):
        pred, yb = s >= threshold, y.astype(bool)
        for name, metric in (("accuracy", _accuracy), ("f1", _f1)):
            boot = paired_bootstrap((pred, yb), metric, resamples=resamples, rng=rng)
            out[name] = _interval(float(metric(pred, yb)), boot.low, boot.high)
    else:
        out["accuracy"] = out["f1"] = None  # every item is neutral: no pole to be right about
    # ECE over every item (quality is the target, as in training metrics).
    boot = paired_bootstrap((scores, quality), _ece, resamples=resamples, rng=rng)
    out["calibration_error"] = _debiased_interval(float(_ece(scores, quality)), boot)
    return out


def _debiased_interval(value: float, boot: Resampled) -> dict[str, float]:
    """A percentile interval shifted by the bootstrap's bias, for a statistic the resampling inflates.

    ECE sums |Σ score − Σ quality| per bin: resampling adds noise that the absolute value never cancels, so
    the resampled ECEs sit above the estimate and a plain percentile interval can leave out the value itself
    ("0.044 (0.048–0.117)"). Shifting by mean(resampled) − value centres the interval on the estimate (BCa,
    SciPy's default, fails exactly here: with every resample above the estimate its bias correction is
    infinite); it is widened to hold the value in the rare case the shift does not, and floored at 0.
    """
    bias = float(boot.values.mean()) - value
    return _interval(value, max(0.0, min(boot.low - bias, value)), max(boot.high - bias, value))
