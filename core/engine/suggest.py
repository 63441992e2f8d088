"""Which unlabelled texts to label next for one trait (active learning on frozen embeddings).

Modes:

* `typical`: TypiClust (Hacohen et al., 2022): k-means the pool into one cluster per label plus one per pick,
  then take the most typical text (the densest: closest to its nearest neighbours) of the largest clusters no
  label covers yet. Representative picks: they make the labelled poles' prototypes (what training estimates)
  look like the pool's, where random picks leave them noisy.
* `uncertain`: the texts the current fit scores closest to 0.5: the smallest margin |raw score|, taken
  alternately from the two sides of the boundary (so both poles get labels).
* `diverse`: farthest-first (greedy k-center) on cosine distance, seeded with the labelled samples: the texts
  no label is near, outliers first (coverage; kept as an explicit choice, `auto` does not use it).
* `positive` / `negative`: the texts the fit scores highest / lowest ("find more of this pole", for a rare
  pole). With labels on one pole only, the texts most similar to that pole's labels.
* `auto`: `typical`; while the rarer pole has less than a third of the labels (`RARE_POLE`), half the picks
  from each side of the fit's boundary (the rare pole's side first), typical within each side.

Why (labelling simulation, `benchmarks/labelling.py`, README): the smallest margin needed *more* labels than
random on politeness and subjectivity (the boundary's texts are the ambiguous, noisily labelled ones, and a
prototype fit learns little from them), farthest-first picks outliers that pull the prototypes astray, and
typical picks needed the fewest; on an imbalanced pool random and typical picks rarely reach the rare pole,
which balancing the two sides fixes. The fit (for the sides, the scores and `uncertain`) is the one training
starts from: `balanced_cosine` at the prior shrinkage (`PRIOR_SHRINKAGE`), pulled toward the trait's
pole-text direction (`prior`, see `pole_prior`) with training's `PRIOR_STRENGTH`.

Near-duplicates (cosine >= `NEAR_DUPLICATE`) of a labelled text or of an earlier pick are never suggested.
Rows of `pool` and `labelled` are L2-normalised embeddings (as every embedder here returns them).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from core.contract import SUGGEST_MODES
from core.embedders.base import Embedder
from core.engine.pole_text import all_pole_texts, zero_shot_axis
from core.engine.poles import pole_signs
from core.engine.training import PRIOR_SHRINKAGE, PRIOR_STRENGTH
from core.engine.trait_model import BalancedCosineTrait
from core.engine.types import TraitSpec

NEAR_DUPLICATE = 0.95
#: Diverse picks consider at most this many pool rows (a fixed random subset): k-center over a sample of a
#: large pool covers it as well and keeps the cost independent of the pool's size.
DIVERSE_CANDIDATES = 10_000
#: Typical picks cluster at most this many pool rows (a fixed random subset) into at most `TYPICAL_CLUSTERS`
#: clusters, with a bounded k-means: the cost stays independent of the pool's and the label set's size.
TYPICAL_CANDIDATES = 4000
TYPICAL_CLUSTERS = 256
TYPICAL_NEIGHBOURS = 20
#: `auto` balances its picks across the boundary while the rarer pole has less than this share of the labels.
RARE_POLE = 1 / 3
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
    """The fit on the pole labels (neutral ones define neither pole), or None without labels on both."""
    signs = pole_signs(quality)
    positive, negative = int((signs > 0).sum()), int((signs < 0).sum())
    if not positive or not negative:
        return None
    folds = min(5, positive, negative)
    strength = PRIOR_STRENGTH if prior is not None else 0.0
    on = signs != 0
    return BalancedCosineTrait(
        PRIOR_SHRINKAGE, folds=max(folds, 2), prior=prior, prior_strength=strength
    ).fit(labelled[on], quality[on])


@dataclass(frozen=True)
class Fit:
    """The fit `suggest` picks and scores with, fitted once (`fit`): a caller scores other rows with it (texts
    handed out beside the picks) instead of fitting again on the same labels."""

    model: BalancedCosineTrait | None  # None without labels on both poles

    def scores(self, rows: np.ndarray) -> list[float | None]:
        """The scores `suggest` gives its picks, for any embedded rows (None each without a fit)."""
        m = self.model
        if m is None:
            return [None] * len(rows)
        raw = np.asarray(rows, dtype=np.float32) @ m.w_.astype(np.float32) - np.float32(m.offset_)
        return [float(expit(m.k_ * r)) for r in raw]


def fit(labelled: np.ndarray, quality: np.ndarray, prior: np.ndarray | None = None) -> Fit:
    """The fit on these labels (`prior`: the trait's pole-text direction, see `pole_prior`)."""
    return Fit(_fit(np.asarray(labelled, dtype=np.float32), np.asarray(quality, dtype=np.float64), prior))


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


def _uncertain(
    pool: np.ndarray, raw: np.ndarray, labelled: np.ndarray, k: int, allowed: np.ndarray
) -> list[int]:
    order = np.argsort(np.abs(raw), kind="stable")
    order = order[allowed[order]]
    # Alternate the two sides of the boundary, each in margin order: both poles get labels even when the
    # boundary sits off-centre in an imbalanced pool.
    side = raw[order] >= 0
    rank = np.empty(len(order), dtype=np.int64)
    rank[side], rank[~side] = np.arange(side.sum()), np.arange((~side).sum())
    return _pick_in_order(pool, order[np.argsort(rank, kind="stable")], labelled, k, allowed)


def _candidates(allowed: np.ndarray, at_most: int, rng: np.random.Generator) -> np.ndarray:
    """The allowed rows, or a fixed random subset of `at_most` of them (in row order)."""
    candidates = np.flatnonzero(allowed)
    if len(candidates) > at_most:
        candidates = np.sort(rng.choice(candidates, at_most, replace=False))
    return candidates


def _diverse(
    pool: np.ndarray, labelled: np.ndarray, k: int, allowed: np.ndarray, rng: np.random.Generator
) -> list[int]:
    candidates = _candidates(allowed, DIVERSE_CANDIDATES, rng)
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


def _typical(
    pool: np.ndarray, labelled: np.ndarray, k: int, allowed: np.ndarray, rng: np.random.Generator
) -> list[int]:
    candidates = _candidates(allowed, TYPICAL_CANDIDATES, rng)
    if len(labelled) and len(candidates):
        candidates = candidates[(pool[candidates] @ labelled.T).max(axis=1) < NEAR_DUPLICATE]
    if not len(candidates) or k < 1:
        return []
    X = pool[candidates]
    n_clusters = int(min(len(labelled) + k, TYPICAL_CLUSTERS, len(X)))
    # The labelled texts take part in the clustering (as in TypiClust): their clusters count as covered.
    km = KMeans(n_clusters, init="random", n_init=1, max_iter=50, random_state=int(rng.integers(2**31)))
    with warnings.catch_warnings():
        # Repeated or nearly equal texts can leave k-means fewer clusters than asked for, which it warns of;
        # an empty cluster is simply skipped below.
        warnings.simplefilter("ignore", ConvergenceWarning)
        assigned = km.fit_predict(np.vstack([X, labelled]))
    own = assigned[: len(X)]
    sizes = np.bincount(own, minlength=n_clusters)
    covered = np.bincount(assigned[len(X) :], minlength=n_clusters)
    # Clusters no label covers first, largest first; then the most texts per label.
    order = sorted(range(n_clusters), key=lambda c: (covered[c] > 0, -sizes[c] / (1 + covered[c]), c))
    # Each cluster's members, most typical first (mean cosine similarity to its nearest neighbours).
    queues: list[list[int]] = []
    for c in order:
        members = np.flatnonzero(own == c)
        if len(members):
            sims = X[members] @ X[members].T
            near = min(TYPICAL_NEIGHBOURS, len(members) - 1)
            density = np.sort(sims, axis=1)[:, -near - 1 : -1].mean(axis=1) if near else np.ones(1)
            queues.append([int(members[j]) for j in np.argsort(-density, kind="stable")])
    # One pick per cluster in that order; more rounds only when the clusters run out (a small pool).
    picks: list[int] = []
    while len(picks) < k and any(queues):
        for queue in queues:
            while queue:
                i = queue.pop(0)
                if not picks or float((X[picks] @ X[i]).max()) < NEAR_DUPLICATE:
                    picks.append(i)
                    break
            if len(picks) == k:
                break
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
    fitted: Fit | None = None,
) -> Suggestions:
    """Up to `k` pool rows to label next for one trait (`labelled`/`quality`: its samples so far).

    `exclude` (bool per pool row) removes rows outright, e.g. texts already labelled for this trait.
    `prior`: the trait's pole-text direction (`pole_prior`), so the fit is the one training starts from.
    `fitted`: `fit(labelled, quality, prior)` when the caller has it already (the fit is not made again).
    """
    if mode not in SUGGEST_MODES:
        raise ValueError(f"mode must be one of {', '.join(SUGGEST_MODES)}")
    pool = np.asarray(pool, dtype=np.float32)
    labelled = np.asarray(labelled, dtype=np.float32).reshape(-1, pool.shape[1] if pool.ndim == 2 else 0)
    quality = np.asarray(quality, dtype=np.float64)
    allowed = np.ones(len(pool), dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    if not len(pool) or k < 1:
        return Suggestions([], [], "typical" if mode == "auto" else mode)
    signs = pole_signs(quality)
    positive = signs[signs != 0] > 0  # the pole labels: a neutral label is on neither side
    fit = fitted.model if fitted is not None else _fit(labelled, quality, prior)
    # pool @ w in float32: the engine's float64 row sums would copy a 100k-row pool for no useful precision
    raw = (pool @ fit.w_.astype(np.float32) - np.float32(fit.offset_)) if fit is not None else None
    rng = np.random.default_rng(seed)

    if raw is None and mode in ("auto", "uncertain"):
        mode = "typical"  # no fit yet (a pole without labels): representative picks
    if mode == "auto" and raw is not None and min(positive.mean(), 1.0 - positive.mean()) < RARE_POLE:
        # A rare pole: half the typical texts from each side of the fit's boundary, the rare pole's first.
        assert fit is not None  # raw is not None
        raw_l = labelled @ fit.w_.astype(np.float32) - np.float32(fit.offset_)
        rare_negative = bool(positive.mean() >= 0.5)
        picks: list[int] = []
        for n, negative_side in (((k + 1) // 2, rare_negative), (k // 2, not rare_negative)):
            side, own = ((raw < 0), (raw_l < 0)) if negative_side else ((raw >= 0), (raw_l >= 0))
            picks += _typical(pool, np.vstack([labelled[own], pool[picks]]), n, allowed & side, rng)
        if len(picks) < k:  # a side ran out of texts
            rest = allowed.copy()
            rest[picks] = False
            picks += _typical(pool, np.vstack([labelled, pool[picks]]), k - len(picks), rest, rng)
    elif mode in ("auto", "typical"):
        mode, picks = "typical", _typical(pool, labelled, k, allowed, rng)
    elif mode == "uncertain" and raw is not None:
        picks = _uncertain(pool, raw, labelled, k, allowed)
    elif mode in ("positive", "negative") and (raw is not None or len(positive)):
        if raw is not None:
            key = -raw if mode == "positive" else raw
        else:
            # One pole labelled: nearest to it for its own mode, farthest from it for the other.
            sims = pool @ labelled[signs != 0].mean(axis=0)
            same = bool(positive.all()) == (mode == "positive")
            key = -sims if same else sims
        picks = _pick_in_order(pool, np.argsort(key, kind="stable"), labelled, k, allowed)
    else:
        picks = _diverse(pool, labelled, k, allowed, rng)
    scores: list[float | None] = (
        [float(expit(fit.k_ * raw[i])) for i in picks]
        if fit is not None and raw is not None
        else [None] * len(picks)
    )
    return Suggestions(picks, scores, mode)
