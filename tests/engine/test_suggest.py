"""`core.engine.suggest`: typical picks, the smallest margin, `auto`'s balance for a rare pole; pole modes,
near-duplicates, exclusions."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine.suggest import NEAR_DUPLICATE, suggest


def _unit(X: np.ndarray) -> np.ndarray:
    return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)


def _clusters(
    n_per: int = 50, centres: int = 6, dim: int = 32, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    C = _unit(rng.standard_normal((centres, dim)))
    X = np.repeat(C, n_per, axis=0) + 0.15 * rng.standard_normal((centres * n_per, dim))
    return _unit(X), np.repeat(np.arange(centres), n_per)


def test_diverse_covers_every_cluster_before_repeating() -> None:
    X, cluster = _clusters()
    labelled = X[[0]]  # one label in cluster 0
    got = suggest(X, labelled, np.array([1.0]), k=5, mode="diverse")
    assert got.mode == "diverse" and got.scores == [None] * 5  # one pole only: no fit
    assert sorted(cluster[got.indices]) == [1, 2, 3, 4, 5]


def test_uncertain_picks_smallest_margin_and_poles_pick_extremes() -> None:
    rng = np.random.default_rng(1)
    axis = np.zeros(16)
    axis[0] = 1.0
    pool = _unit(rng.standard_normal((400, 16)))
    labelled = _unit(
        np.vstack([axis + 0.1 * rng.standard_normal((10, 16)), -axis + 0.1 * rng.standard_normal((10, 16))])
    )
    q = np.r_[np.ones(10), np.zeros(10)]
    uncertain = suggest(pool, labelled, q, k=8, mode="uncertain")
    assert uncertain.mode == "uncertain"
    scores = np.asarray(uncertain.scores)
    margins = np.abs(scores - 0.5)
    for side in (scores > 0.5, scores <= 0.5):  # each side of the boundary in margin order
        assert side.any() and np.all(np.diff(margins[side]) >= -1e-9)
    assert margins.max() < 0.1
    positive = suggest(pool, labelled, q, k=5, mode="positive")
    negative = suggest(pool, labelled, q, k=5, mode="negative")
    highs = [s for s in positive.scores if s is not None]
    lows = [s for s in negative.scores if s is not None]
    assert len(highs) == len(positive.scores) and len(lows) == len(negative.scores)  # every pick has a score
    assert min(highs) > 0.5 > max(lows)
    assert pool[positive.indices, 0].min() > pool[:, 0].mean() > pool[negative.indices, 0].max()


@pytest.mark.parametrize("mode", ["auto", "typical", "diverse", "uncertain", "positive", "negative"])
def test_near_duplicates_and_excluded_rows_never_suggested(mode: str) -> None:
    X, _ = _clusters(n_per=20, seed=3)
    pool = np.vstack([X, X[:40]])  # every one of the first 40 rows twice
    labelled = X[[0, 20, 40, 60, 80, 100, 5, 25, 45, 65, 85, 105, 6, 26, 46, 66, 86, 106]]
    q = np.array([1.0, 0.0] * 9)
    exclude = np.zeros(len(pool), dtype=bool)
    exclude[10:20] = True
    got = suggest(pool, labelled, q, k=30, mode=mode, exclude=exclude)
    picked = pool[got.indices]
    sims = picked @ picked.T
    np.fill_diagonal(sims, 0.0)
    assert sims.max() < NEAR_DUPLICATE
    assert (picked @ labelled.T).max() < NEAR_DUPLICATE
    assert not set(got.indices) & set(range(10, 20))


def test_empty_pool_and_bad_mode() -> None:
    assert suggest(np.zeros((0, 8), np.float32), np.zeros((0, 8)), np.zeros(0), k=3).indices == []
    with pytest.raises(ValueError, match="mode"):
        suggest(np.eye(4, dtype=np.float32), np.zeros((0, 4)), np.zeros(0), mode="best")


def test_typical_takes_the_centre_of_the_largest_clusters_no_label_covers() -> None:
    rng = np.random.default_rng(2)
    sizes = [120, 90, 60, 40, 25, 15]
    C = _unit(rng.standard_normal((len(sizes), 32)))
    X = _unit(np.repeat(C, sizes, axis=0) + 0.15 * rng.standard_normal((sum(sizes), 32)))
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    labelled = X[[0, 1]]  # two labels in the largest cluster, one per pole
    got = suggest(X, labelled, np.array([1.0, 0.0]), k=3, mode="typical")
    assert got.mode == "typical"
    assert sorted(cluster[got.indices]) == [1, 2, 3]  # the three largest uncovered clusters
    for i in got.indices:  # each pick is among the texts nearest its cluster's centre
        own = np.flatnonzero(cluster == cluster[i])
        to_centre = X[own] @ X[own].mean(axis=0)
        assert float(X[i] @ X[own].mean(axis=0)) >= np.quantile(to_centre, 0.75)
    # Without any label (cold start) `auto` takes typical texts too.
    cold = suggest(X, np.zeros((0, 32)), np.zeros(0), k=4)
    assert cold.mode == "typical" and len(set(cluster[cold.indices])) == 4


def test_auto_balances_typical_picks_across_the_boundary_while_a_pole_is_rare() -> None:
    """Known direction (axis 0), a pool with one pole rare (1 in 10). Labels 4 + 4: `auto` takes typical
    texts, which follow the pool (mostly the common side). Labels 1 + 7 (the rarer pole under a third): half
    the picks from each side of the boundary, the rare pole's side first."""
    rng = np.random.default_rng(1)
    dim, n = 16, 600
    X = rng.standard_normal((n, dim))
    X[:, 0] = (np.abs(X[:, 0]) + 1.0) * np.where(rng.random(n) < 0.1, 1.0, -1.0)  # a gap at the boundary
    pool = _unit(X)
    axis = np.eye(dim)[0]

    def labels(n_pos: int, n_neg: int) -> tuple[np.ndarray, np.ndarray]:
        noise = 0.2 * rng.standard_normal((n_pos + n_neg, dim))
        L = np.vstack([np.tile(axis, (n_pos, 1)), np.tile(-axis, (n_neg, 1))]) + noise
        return _unit(L), np.r_[np.ones(n_pos), np.zeros(n_neg)]

    even = suggest(pool, *labels(4, 4), k=10, prior=axis)
    assert even.mode == "typical" and (pool[even.indices, 0] > 0).sum() <= 3  # like the pool: mostly negative
    rare = suggest(pool, *labels(1, 7), k=10, prior=axis)
    assert rare.mode == "auto" and len(rare.indices) == 10
    scored_positive = np.asarray(rare.scores) > 0.5
    assert list(scored_positive) == [True] * 5 + [False] * 5  # the rare pole's side first, then the other
    assert (pool[rare.indices[:5], 0] > 0).all() and (pool[rare.indices[5:], 0] < 0).all()
    assert suggest(pool, *labels(0, 4), k=5).mode == "typical"  # one pole only: no fit


def test_typical_returns_every_text_once_when_the_pool_is_smaller_than_k() -> None:
    X, _ = _clusters(n_per=3, centres=4, seed=5)  # 12 texts, 2 of them labelled
    labelled, q = X[[0, 3]], np.array([1.0, 0.0])
    exclude = np.zeros(len(X), dtype=bool)
    exclude[[0, 3]] = True
    for mode in ("auto", "typical"):
        got = suggest(X, labelled, q, k=20, mode=mode, exclude=exclude)
        assert sorted(got.indices) == [i for i in range(12) if i not in (0, 3)], mode
