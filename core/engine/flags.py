"""Flags on a model's samples: likely mislabelled samples and outliers (the workbench's Flags tab).

Mislabels come from out-of-fold scores: `core.engine.BalancedCosineTrait` fits each trait with stratified
folds and keeps every sample's raw score from the fold that did not see it (`oof_raw_`); its calibrated
score (sigmoid(k * raw)) far on the other side of 0.5 from the sample's own label is suspicious. Outliers
are samples whose nearest neighbours within their trait are much less similar than usual (a robust z-score
of the mean cosine similarity to the k nearest neighbours). A sample with a near-duplicate in its trait is
never an outlier, and the spread behind the z-score has a floor: in a trait made mostly of near-duplicates
the median similarity is ~1 with almost no spread, and ordinary samples would otherwise score z < -3.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import expit

from core.embedders.base import Embedder
from core.engine.trait_model import BalancedCosineTrait
from core.engine.validation import POSITIVE_THRESHOLD

MISLABEL_MARGIN = 0.25  # flag a positive sample scored below 0.25 (a negative one above 0.75)
OUTLIER_Z = -3.0  # robust z of the kNN similarity below which a sample is an outlier
NEIGHBOURS = 5
NEAR_DUPLICATE = 0.95  # cosine similarity to the nearest neighbour at which a sample has a near-duplicate
MIN_SPREAD = 0.05  # floor of the robust spread (cosine): z < -3 needs at least 0.15 below the median


def oof_scores(X: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """Calibrated out-of-fold scores of each sample, or None when a pole has fewer than 2 samples."""
    model = BalancedCosineTrait(shrinkage=1.0, folds=5).fit(X, q)
    if model.oof_raw_ is None:
        return None
    return expit(model.k_ * model.oof_raw_.mean(axis=0))


def likely_mislabelled(q: np.ndarray, oof: np.ndarray) -> np.ndarray:
    """Which samples are likely mislabelled, from their quality (>= 0.5 is positive) and held-out scores."""
    positive = q >= POSITIVE_THRESHOLD
    return (positive & (oof < MISLABEL_MARGIN)) | (~positive & (oof > 1 - MISLABEL_MARGIN))


def neighbour_similarities(X: np.ndarray, k: int = NEIGHBOURS, chunk: int = 1024) -> np.ndarray:
    """Cosine similarities of each row to its k most similar other rows (rows are L2-normalised), (n, k).

    Rows go in blocks in float32, so 10,000 samples need a 1,024 x 10,000 block at a time instead of a
    10,000 x 10,000 float64 matrix (800 MB, and most of the flags' time).
    """
    n = X.shape[0]
    k = min(k, n - 1)
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    out = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, chunk):
        sims = X32[start : start + chunk] @ X32.T
        rows = np.arange(sims.shape[0])
        sims[rows, start + rows] = -np.inf  # not its own neighbour
        for j in range(k):  # k argmax passes: ~10x faster than np.partition for the small k used here
            best = sims.argmax(axis=1)
            out[start + rows, j] = sims[rows, best]
            sims[rows, best] = -np.inf
    return out


def knn_similarity(X: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Mean cosine similarity of each row to its k nearest other rows (rows are L2-normalised)."""
    return neighbour_similarities(X, k).mean(axis=1, dtype=np.float64)


def robust_z(values: np.ndarray, min_spread: float = 0.0) -> np.ndarray:
    median = np.median(values)
    mad = max(np.median(np.abs(values - median)) * 1.4826, min_spread)
    if mad < 1e-12:
        return np.zeros_like(values)
    return (values - median) / mad


def nearest_similarity(X: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row to its most similar other row."""
    return neighbour_similarities(X, k=1)[:, 0].astype(np.float64)


EMBED_BATCH = 512  # texts a progress step while embedding


def flag_samples(
    samples: list[dict[str, Any]],
    embedder: Embedder,
    progress: Callable[[float, str], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per flagged sample: id, trait, text, quality, oof_score, flag, why.

    `progress(fraction, step)` reports each step ("Embedding formality: 512 of 10,000 samples", then its
    cross-validation and neighbours), and `(1.0, "")` at the end. A sample counts once embedded and once
    checked, so the bar moves through a large trait, not only between traits.
    """
    by_trait: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_trait[s["trait"]].append(s)
    flagged: list[dict[str, Any]] = []
    units = 2 * max(len(samples), 1)
    done = 0

    def step(count: int, text: str) -> None:
        if progress:
            progress(min(count / units, 1.0), text)

    for trait, group in by_trait.items():
        if len(group) < 3:
            done += 2 * len(group)
            continue
        texts = [s["text"] for s in group]
        blocks = []
        for start in range(0, len(texts), EMBED_BATCH):
            step(done + start, f"Embedding {trait}: {start:,} of {len(texts):,} samples")
            blocks.append(np.asarray(embedder.encode(texts[start : start + EMBED_BATCH]), dtype=np.float64))
        X = np.vstack(blocks)
        done += len(group)
        q = np.asarray([float(s["quality"]) for s in group])
        step(done, f"Cross-validating {trait} ({len(group):,} samples)")
        oof = oof_scores(X, q)
        mislabelled = np.zeros(len(group), dtype=bool) if oof is None else likely_mislabelled(q, oof)
        if len(group) >= 10:
            step(done + len(group) // 2, f"Comparing each {trait} sample with its nearest neighbours")
            top = neighbour_similarities(X)  # one pass gives both the kNN mean and the nearest neighbour
            z = robust_z(top.mean(axis=1, dtype=np.float64), MIN_SPREAD)
            z[top.max(axis=1) >= NEAR_DUPLICATE] = 0.0  # a near-duplicate is never an outlier
        else:
            z = np.zeros(len(group))
        done += len(group)
        for i, s in enumerate(group):
            reasons: list[tuple[str, str]] = []
            score = None if oof is None else float(oof[i])
            if score is not None and mislabelled[i]:
                side = "positive" if q[i] >= POSITIVE_THRESHOLD else "negative"
                reasons.append(("likely mislabelled", f"labelled {side}, held-out score {score:.2f}"))
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
    step(units, "")
    flagged.sort(
        key=lambda r: (r["flag"] != "likely mislabelled", -abs((r["oof_score"] or 0.5) - r["quality"]))
    )
    return flagged
