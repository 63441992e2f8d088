"""Decision thresholds chosen on an evaluation set for a target precision or recall.

Definitions: docs/engine-evaluation.md. The scores stay calibrated probabilities; a threshold only turns a
score into a yes/no decision for one trait.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.metrics import precision_recall_curve

from core.contract import MAX_PR_POINTS, threshold_choice
from core.engine.metrics import sides
from core.engine.types import JsonObject

Target = Literal["precision", "recall"]


def _curve(scores: np.ndarray, quality: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, precision, recall) at every distinct score; positives by the pole rule (sides)."""
    mask, y = sides(np.asarray(quality, dtype=float))
    s = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)[mask]
    precision, recall, thresholds = precision_recall_curve(y, s)
    return thresholds, precision[:-1], recall[:-1]  # the last point (recall 0) has no threshold


def pr_curve(
    scores: np.ndarray, quality: np.ndarray, max_points: int = MAX_PR_POINTS
) -> list[dict[str, float]]:
    """Points `{threshold, precision, recall}` by rising threshold; thinned evenly to `max_points`."""
    if len(np.unique(sides(np.asarray(quality, dtype=float))[1])) != 2:
        return []  # no curve without both sides
    thresholds, precision, recall = _curve(scores, quality)
    keep = np.arange(len(thresholds))
    if len(keep) > max_points:
        keep = np.unique(np.linspace(0, len(keep) - 1, max_points).round().astype(int))
    return [
        {
            "threshold": round(float(thresholds[i]), 6),
            "precision": round(float(precision[i]), 6),
            "recall": round(float(recall[i]), 6),
        }
        for i in keep
    ]


def choose_threshold(
    scores: np.ndarray, quality: np.ndarray, target: Target, value: float
) -> JsonObject | None:
    """The threshold meeting `target` ≥ `value` by the one rule of `core.contract.threshold_choice` (the
    best other measure, ties to the higher threshold); None when no threshold can."""
    if len(np.unique(sides(np.asarray(quality, dtype=float))[1])) != 2:
        return None  # precision and recall need both sides
    thresholds, precision, recall = _curve(scores, quality)
    curve = list(zip(thresholds.tolist(), precision.tolist(), recall.tolist(), strict=True))
    best = threshold_choice(curve, target, value)
    if best is None:
        return None
    return {
        "threshold": float(thresholds[best]),  # exact: rounding up would drop the items that sit on it
        "precision": round(float(precision[best]), 6),
        "recall": round(float(recall[best]), 6),
    }
