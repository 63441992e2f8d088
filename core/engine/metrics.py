"""Per-trait quality metrics, all from out-of-fold (held-out) scores. Definitions: docs/engine.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

CALIBRATION_BINS = 10
ANCHORS_PER_POLE = 3


def sides(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, y) for binary metrics: which samples count and which of them are positive.

    A quality of exactly 0.5 sits on the midpoint, so it is left out, unless that would leave a
    side empty; then the API's pole rule (quality >= 0.5 is positive) decides for every sample.
    """
    q = np.asarray(q)
    mask = q != 0.5
    y = q > 0.5
    if not (y[mask].any() and (~y[mask]).any()):
        mask, y = np.ones(len(q), dtype=bool), q >= 0.5
    return mask, y[mask].astype(int)


def cv_roc_auc(raw: np.ndarray, q: np.ndarray) -> float | None:
    """Mean over repeats of the ROC-AUC of pooled out-of-fold scores; None without both sides."""
    mask, y = sides(q)
    if y.min(initial=1) == y.max(initial=0):
        return None
    return float(np.mean([roc_auc_score(y, row[mask]) for row in np.atleast_2d(raw)]))


def accuracy(scores: np.ndarray, q: np.ndarray) -> float | None:
    mask, y = sides(q)
    if not mask.any():
        return None
    return float(np.mean([np.mean((row[mask] >= 0.5) == y) for row in np.atleast_2d(scores)]))


def expected_calibration_error(scores: np.ndarray, q: np.ndarray, bins: int = CALIBRATION_BINS) -> float:
    """ECE: mean over equal-width score bins of |mean score - mean quality|, weighted by bin size."""
    scores = np.atleast_2d(scores)
    target = np.tile(q, scores.shape[0])
    s = scores.ravel()
    which = np.minimum((s * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        in_bin = which == b
        if in_bin.any():
            total += in_bin.sum() * abs(float(s[in_bin].mean()) - float(target[in_bin].mean()))
    return float(total / len(s))


def discrimination(scores: np.ndarray, q: np.ndarray) -> float | None:
    """Mean held-out score of positive-pole samples minus that of negative-pole samples."""
    mask, y = sides(q)
    if y.min(initial=1) == y.max(initial=0):
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
    ids: Sequence[Any],
    p_pos: np.ndarray,
    p_neg: np.ndarray,
    per_pole: int = ANCHORS_PER_POLE,
) -> dict[str, list[Any]]:
    """Ids of the samples most typical of their pole: highest cosine to their own pole's prototype."""
    out: dict[str, list[Any]] = {}
    positive = np.asarray(q) >= 0.5
    for pole, members, proto in (("positive", positive, p_pos), ("negative", ~positive, p_neg)):
        norm = float(np.linalg.norm(proto))
        cos = X @ proto / (norm if norm > 0 else 1.0)  # rows of X are unit vectors
        candidates = [i for i in np.flatnonzero(members) if ids[i] is not None]
        # Stable order: best cosine first, ties by position so the result is deterministic.
        candidates.sort(key=lambda i: (-cos[i], i))
        out[pole] = [ids[i] for i in candidates[:per_pole]]
    return out
