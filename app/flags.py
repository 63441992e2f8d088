"""Flags on a model's samples from the local engine: likely mislabelled samples and outliers.

Mislabels come from out-of-fold scores: `core.engine.BalancedCosineTrait` fits each trait with stratified
folds and keeps every sample's raw score from the fold that did not see it (`oof_raw_`); its calibrated
score (sigmoid(k * raw)) far on the other side of 0.5 from the sample's own label is suspicious. Outliers
are samples whose nearest neighbours within their trait are much less similar than usual (a robust z-score
of the mean cosine similarity to the k nearest neighbours).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from scipy.special import expit

from core.embedders.base import Embedder
from core.engine.trait_model import BalancedCosineTrait

MISLABEL_MARGIN = 0.25  # flag a positive sample scored below 0.25 (a negative one above 0.75)
OUTLIER_Z = -3.0  # robust z of the kNN similarity below which a sample is an outlier
NEIGHBOURS = 5


def oof_scores(X: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """Calibrated out-of-fold scores of each sample, or None when a pole has fewer than 2 samples."""
    model = BalancedCosineTrait(shrinkage=1.0, folds=5).fit(X, q)
    if model.oof_raw_ is None:
        return None
    return expit(model.k_ * model.oof_raw_.mean(axis=0))


def knn_similarity(X: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Mean cosine similarity of each row to its k nearest other rows (rows are L2-normalised)."""
    n = X.shape[0]
    k = min(k, n - 1)
    sims = X @ X.T
    np.fill_diagonal(sims, -np.inf)
    top = np.partition(sims, n - k, axis=1)[:, n - k :]
    return top.mean(axis=1)


def robust_z(values: np.ndarray) -> np.ndarray:
    median = np.median(values)
    mad = np.median(np.abs(values - median)) * 1.4826
    if mad < 1e-12:
        return np.zeros_like(values)
    return (values - median) / mad


def flag_samples(samples: list[dict[str, Any]], embedder: Embedder) -> list[dict[str, Any]]:
    """One row per flagged sample: id, trait, text, quality, oof_score, flag, why."""
    by_trait: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_trait[s["trait"]].append(s)
    flagged: list[dict[str, Any]] = []
    for trait, group in by_trait.items():
        if len(group) < 3:
            continue
        X = np.asarray(embedder.encode([s["text"] for s in group]), dtype=np.float64)
        q = np.asarray([float(s["quality"]) for s in group])
        oof = oof_scores(X, q)
        z = robust_z(knn_similarity(X)) if len(group) >= 10 else np.zeros(len(group))
        for i, s in enumerate(group):
            reasons: list[tuple[str, str]] = []
            score = None if oof is None else float(oof[i])
            if score is not None:
                if q[i] >= 0.5 and score < MISLABEL_MARGIN:
                    reasons.append(("likely mislabelled", f"labelled positive, held-out score {score:.2f}"))
                elif q[i] < 0.5 and score > 1 - MISLABEL_MARGIN:
                    reasons.append(("likely mislabelled", f"labelled negative, held-out score {score:.2f}"))
            if z[i] < OUTLIER_Z:
                reasons.append(("outlier", f"unlike its trait's other samples (z {z[i]:.1f})"))
            for flag, why in reasons:
                flagged.append(
                    {
                        "id": s.get("id"),
                        "trait": trait,
                        "flag": flag,
                        "text": s["text"],
                        "quality": float(s["quality"]),
                        "oof_score": score,
                        "why": why,
                    }
                )
    flagged.sort(
        key=lambda r: (r["flag"] != "likely mislabelled", -abs((r["oof_score"] or 0.5) - r["quality"]))
    )
    return flagged
