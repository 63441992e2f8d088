"""Per-trait quality metrics, all from out-of-fold (held-out) scores (docs/engine-evaluation.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import roc_auc_score

from core.contract import ANCHORS_PER_POLE, DEFAULT_DECISION_THRESHOLD
from core.engine.poles import pole_signs

CALIBRATION_BINS = 10
#: Clip of a score before its logit (a score of exactly 0 or 1 has none).
_CLIP = 1e-6


def sides(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, y) for binary metrics: which samples count and which of them are positive.

    A neutral quality (exactly 0.5, `core.contract.pole_of`) is on neither side, so it is always left out; a
    metric whose `y` then lacks a side is undefined (None).
    """
    signs = pole_signs(q)
    mask = signs != 0
    return mask, (signs[mask] > 0).astype(int)


def both_sides(y: np.ndarray) -> bool:
    """Whether `sides`'s `y` holds a positive and a negative: what AUC and discrimination need."""
    return 0 < int(y.sum()) < len(y)


def cv_roc_auc(raw: np.ndarray, q: np.ndarray) -> float | None:
    """Mean over repeats of the ROC-AUC of pooled out-of-fold scores; None without both sides."""
    mask, y = sides(q)
    if not both_sides(y):
        return None
    return float(np.mean([roc_auc_score(y, row[mask]) for row in np.atleast_2d(raw)]))


def accuracy(scores: np.ndarray, q: np.ndarray) -> float | None:
    mask, y = sides(q)
    if not mask.any():
        return None
    hits = [(row[mask] >= DEFAULT_DECISION_THRESHOLD) == y for row in np.atleast_2d(scores)]
    return float(np.mean([np.mean(h) for h in hits]))


def expected_calibration_error(
    scores: np.ndarray, quality: np.ndarray, bins: int = CALIBRATION_BINS
) -> np.ndarray:
    """ECE along the last axis: the mean over equal-width score bins of |mean score - mean quality|, weighted
    by bin size, i.e. the sum over bins of |sum of (score - quality)| / items. Each row of a 2-D input (a
    bootstrap resample) gets its own; a 1-D input gives a 0-d array (`float()` it). The one definition used by
    training metrics, evaluation sets and version comparisons."""
    scores = np.asarray(scores, dtype=float)
    diff = scores - np.asarray(quality, dtype=float)
    which = np.minimum((scores * bins).astype(int), bins - 1)
    total = np.zeros(scores.shape[:-1])
    for b in range(bins):
        total += np.abs(np.where(which == b, diff, 0.0).sum(axis=-1))
    error: np.ndarray = total / scores.shape[-1]
    return error


def calibration_slope(scores: np.ndarray, q: np.ndarray) -> float | None:
    """b of P(positive) = sigmoid(a + b logit(score)), fitted class-balanced on scores (pooled over the rows
    of a 2-D input, e.g. repeats of out-of-fold scores) against their sides: 1 is calibrated, above 1 the
    scores sit too close to 0.5, below 1 too far from it. None without both sides, and None where every
    positive scored above every negative: then every slope steeper than some fits them, and a figure would be
    only where the fit stopped (tens), read as scores far too close to 0.5."""
    from sklearn.linear_model import LogisticRegression

    rows = np.atleast_2d(np.asarray(scores, dtype=float))
    mask, y = sides(q)
    if not both_sides(y):
        return None
    x = np.clip(rows[:, mask].ravel(), _CLIP, 1.0 - _CLIP)
    pooled_y = np.tile(y, len(rows))
    positive = pooled_y.astype(bool)
    if x[positive].min() > x[~positive].max():
        return None
    fit = LogisticRegression(C=1e6, class_weight="balanced", max_iter=1000)
    fit.fit(np.log(x / (1.0 - x))[:, None], pooled_y)
    return float(fit.coef_[0, 0])


def f1(pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """F1 of boolean predictions against boolean labels along the last axis (0 when there is no positive at
    all); rows of a 2-D input (bootstrap resamples) each get their own."""
    tp = (pred & y).sum(axis=-1)
    denom = 2 * tp + (pred & ~y).sum(axis=-1) + (~pred & y).sum(axis=-1)
    return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)


def discrimination(scores: np.ndarray, q: np.ndarray) -> float | None:
    """Mean held-out score of positive-pole samples minus that of negative-pole samples."""
    mask, y = sides(q)
    if not both_sides(y):
        return None
    kept = np.atleast_2d(scores)[:, mask]
    return float(kept[:, y == 1].mean() - kept[:, y == 0].mean())


def explained_variance(X: np.ndarray, w: np.ndarray) -> float:
    """Share of the total variance of the samples' embeddings that lies along the axis direction."""
    norm = float(np.linalg.norm(w))
    centred = X - X.mean(axis=0)
    total = float(np.einsum("ij,ij->", centred, centred))
    if norm == 0.0 or total <= 0.0:
        return 0.0
    along = centred @ (w / norm)
    return float(along @ along) / total


def anchor_sample_ids(
    X: np.ndarray,
    q: np.ndarray,
    ids: Sequence[int | None],
    p_pos: np.ndarray,
    p_neg: np.ndarray,
    per_pole: int = ANCHORS_PER_POLE,
) -> dict[str, list[int | None]]:
    """Ids of the samples most typical of their pole: highest cosine to their own pole's prototype."""
    out: dict[str, list[int | None]] = {}
    signs = pole_signs(q)
    for pole, members, proto in (("positive", signs > 0, p_pos), ("negative", signs < 0, p_neg)):
        norm = float(np.linalg.norm(proto))
        cos = X @ proto / (norm if norm > 0 else 1.0)  # rows of X are unit vectors
        candidates = [int(i) for i in np.flatnonzero(members) if ids[int(i)] is not None]
        # Stable order: best cosine first, ties by position so the result is deterministic.
        candidates.sort(key=lambda i: (-cos[i], i))
        out[pole] = [ids[i] for i in candidates[:per_pole]]
    return out
