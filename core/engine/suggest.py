"""Which unlabelled texts to label next for one trait (active learning on frozen embeddings).

Modes:

* `diverse`: farthest-first (greedy k-center) on cosine distance, seeded with the labelled samples, so the
  picks cover the parts of the pool that no label is near yet. `auto` uses it while a pole has no label.
* `uncertain`: the texts the current fit scores closest to 0.5: the smallest margin |raw score|, taken
  alternately from the two sides of the boundary (so both poles get labels).
* `positive` / `negative`: the texts the fit scores highest / lowest ("find more of this pole", for a rare
  pole). With labels on one pole only, the texts most similar to that pole's labels.
* `auto`: `uncertain` as soon as both poles have a label, `diverse` before.

The fit is the one training starts from: `balanced_cosine` at the prior shrinkage (`PRIOR_SHRINKAGE`), pulled
toward the trait's pole-text direction (`prior`, see `pole_prior`) with training's `PRIOR_STRENGTH`. Why
`auto` has no diverse rounds and measures the margin on that fit: in the labelling simulation
(`benchmarks/labelling.py`, README) farthest-first picks are atypical texts that pull the pole prototypes
astray, and a margin measured on a fit without the prior (4 labels per pole) points at the wrong boundary;
the smallest margin under training's own fit from the first round needed the fewest labels.

Near-duplicates (cosine >= `NEAR_DUPLICATE`) of a labelled text or of an earlier pick are never suggested.
Rows of `pool` and `labelled` are L2-normalised embeddings (as every embedder here returns them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from core.embedders.base import Embedder
from core.engine.pole_text import all_pole_texts, zero_shot_axis
from core.engine.training import PRIOR_SHRINKAGE, PRIOR_STRENGTH
from core.engine.trait_model import BalancedCosineTrait
from core.engine.types import TraitSpec
from core.engine.validation import POSITIVE_THRESHOLD

MODES = ("auto", "diverse", "uncertain", "positive", "negative")
NEAR_DUPLICATE = 0.95
#: Diverse picks consider at most this many pool rows (a fixed random subset): k-center over a sample of a
#: large pool covers it as well and keeps the cost independent of the pool's size.
DIVERSE_CANDIDATES = 10_000
_CHUNK = 2048


@dataclass(frozen=True)
class Suggestions:
    indices: list[int]  # rows of the pool, best first
    scores: list[float | None]  # the current fit's score of each pick (None without a fit)
    mode: str  # the mode used (what `auto` chose)


def pole_prior(trait: TraitSpec, embedder: Embedder) -> np.ndarray | None:
    """The trait's pole-text direction, as `train` computes its prior (None when the poles coincide)."""
    positive, negative = all_pole_texts(trait)
    return zero_shot_axis(embedder.encode(positive), embedder.encode(negative)).direction


def _fit(labelled: np.ndarray, quality: np.ndarray, prior: np.ndarray | None) -> BalancedCosineTrait | None:
    positive = quality >= POSITIVE_THRESHOLD
    if positive.sum() < 1 or (~positive).sum() < 1:
        return None
    folds = int(min(5, positive.sum(), (~positive).sum()))
    strength = PRIOR_STRENGTH if prior is not None else 0.0
    return BalancedCosineTrait(
        PRIOR_SHRINKAGE, folds=max(folds, 2), prior=prior, prior_strength=strength
    ).fit(labelled, quality)


def _pick_in_order(
    pool: np.ndarray, order: np.ndarray, labelled: np.ndarray, k: int, allowed: np.ndarray
) -> list[int]:
    """The first k rows of `order` that are allowed and not near-duplicates of a label or an earlier pick."""
    picks: list[int] = []
    for start in range(0, len(order), _CHUNK):
        chunk = order[start : start + _CHUNK]
        chunk = chunk[allowed[chunk]]
        if not len(chunk):
            continue
        if len(labelled):
            near = (pool[chunk] @ labelled.T).max(axis=1) >= NEAR_DUPLICATE
            chunk = chunk[~near]
        for i in chunk:
            if picks and float((pool[picks] @ pool[i]).max()) >= NEAR_DUPLICATE:
                continue
            picks.append(int(i))
            if len(picks) == k:
                return picks
    return picks


def _diverse(
    pool: np.ndarray, labelled: np.ndarray, k: int, allowed: np.ndarray, rng: np.random.Generator
) -> list[int]:
    candidates = np.flatnonzero(allowed)
    if len(candidates) > DIVERSE_CANDIDATES:
        candidates = np.sort(rng.choice(candidates, DIVERSE_CANDIDATES, replace=False))
    if not len(candidates):
        return []
    X = pool[candidates]
    # Similarity of each candidate to its nearest label (or pick): farthest-first takes the least similar.
    nearest = (X @ labelled.T).max(axis=1) if len(labelled) else np.full(len(X), -np.inf, dtype=X.dtype)
    nearest[nearest >= NEAR_DUPLICATE] = np.inf  # near-duplicates of a label are never picked
    picks: list[int] = []
    while len(picks) < k:
        if not len(labelled) and not picks:
            # No label yet: start from the candidate most similar to the pool's mean (a typical text).
            best = int(np.argmax(X @ X.mean(axis=0)))
        else:
            best = int(np.argmin(nearest))
        if not np.isfinite(nearest[best]) and (len(labelled) or picks):
            break  # everything left is a near-duplicate
        picks.append(best)
        sims = X @ X[best]
        nearest = np.maximum(nearest, sims)
        nearest[sims >= NEAR_DUPLICATE] = np.inf
        nearest[best] = np.inf
    return [int(candidates[i]) for i in picks]


def suggest(
    pool: np.ndarray,
    labelled: np.ndarray,
    quality: np.ndarray,
    *,
    k: int = 10,
    mode: str = "auto",
    exclude: np.ndarray | None = None,
    seed: int = 0,
    prior: np.ndarray | None = None,
) -> Suggestions:
    """Up to `k` pool rows to label next for one trait (`labelled`/`quality`: its samples so far).

    `exclude` (bool per pool row) removes rows outright, e.g. texts already labelled for this trait.
    `prior`: the trait's pole-text direction (`pole_prior`), so the fit is the one training starts from.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    pool = np.asarray(pool, dtype=np.float32)
    labelled = np.asarray(labelled, dtype=np.float32).reshape(-1, pool.shape[1] if pool.ndim == 2 else 0)
    quality = np.asarray(quality, dtype=np.float64)
    allowed = np.ones(len(pool), dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    if not len(pool) or k < 1:
        return Suggestions([], [], "diverse" if mode == "auto" else mode)
    positive = quality >= POSITIVE_THRESHOLD
    if mode == "auto":
        mode = "uncertain" if positive.any() and (~positive).any() else "diverse"
    fit = _fit(labelled, quality, prior)
    # pool @ w in float32: the engine's float64 row sums would copy a 100k-row pool for no useful precision
    raw = (pool @ fit.w_.astype(np.float32) - np.float32(fit.offset_)) if fit is not None else None

    if mode == "uncertain" and raw is not None:
        order = np.argsort(np.abs(raw), kind="stable")
        order = order[allowed[order]]
        # Alternate the two sides of the boundary, each in margin order: both poles get labels even when
        # the boundary sits off-centre in an imbalanced pool.
        side = raw[order] >= 0
        rank = np.empty(len(order), dtype=np.int64)
        rank[side], rank[~side] = np.arange(side.sum()), np.arange((~side).sum())
        order = order[np.argsort(rank, kind="stable")]
        picks = _pick_in_order(pool, order, labelled, k, allowed)
    elif mode in ("positive", "negative") and (raw is not None or len(labelled)):
        if raw is not None:
            key = -raw if mode == "positive" else raw
        else:
            # One pole labelled: nearest to it for its own mode, farthest from it for the other.
            sims = pool @ labelled.mean(axis=0)
            same = bool(positive.all()) == (mode == "positive")
            key = -sims if same else sims
        picks = _pick_in_order(pool, np.argsort(key, kind="stable"), labelled, k, allowed)
    else:
        if mode == "uncertain":
            mode = "diverse"  # no fit yet (a pole without labels): cover the pool instead
        picks = _diverse(pool, labelled, k, allowed, np.random.default_rng(seed))
    scores: list[float | None] = (
        [float(expit(fit.k_ * raw[i])) for i in picks]
        if fit is not None and raw is not None
        else [None] * len(picks)
    )
    return Suggestions(picks, scores, mode)
