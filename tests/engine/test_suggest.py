"""`core.engine.suggest`: coverage, then the smallest margin; pole modes, near-duplicates, exclusions."""

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
    auto = suggest(pool, labelled, q, k=8)
    assert auto.mode == "uncertain"
    margins = np.abs(np.asarray(auto.scores) - 0.5)
    assert np.all(np.diff(margins) >= -1e-9) and margins.max() < 0.1
    positive = suggest(pool, labelled, q, k=5, mode="positive")
    negative = suggest(pool, labelled, q, k=5, mode="negative")
    assert min(positive.scores) > 0.5 > max(negative.scores)  # type: ignore[type-var]
    assert pool[positive.indices, 0].min() > pool[:, 0].mean() > pool[negative.indices, 0].max()


@pytest.mark.parametrize("mode", ["auto", "diverse", "uncertain", "positive", "negative"])
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
