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
    scores = np.asarray(auto.scores)
    margins = np.abs(scores - 0.5)
    for side in (scores > 0.5, scores <= 0.5):  # each side of the boundary in margin order
        assert side.any() and np.all(np.diff(margins[side]) >= -1e-9)
    assert margins.max() < 0.1
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




def test_auto_takes_the_boundary_on_both_sides_from_four_labels_per_pole() -> None:
    """Known direction (axis 0): with 4 labels per pole `auto` already asks for the margin (no diverse
    rounds); its picks sit near the known boundary and alternate the fit's two sides (both poles)."""
    rng = np.random.default_rng(0)
    dim = 16
    pool = _unit(rng.standard_normal((600, dim)))
    axis = np.eye(dim)[0]
    labelled = _unit(
        np.vstack([axis + 0.2 * rng.standard_normal((4, dim)), -axis + 0.2 * rng.standard_normal((4, dim))])
    )
    q = np.r_[np.ones(4), np.zeros(4)]
    true_margin = np.abs(pool[:, 0])
    for prior in (None, axis):  # without and with the trait's pole-text direction
        got = suggest(pool, labelled, q, k=12, prior=prior)
        assert got.mode == "uncertain"
        assert true_margin[got.indices].mean() < 0.6 * np.median(true_margin)  # near the known boundary
        above = np.asarray(got.scores) > 0.5
        assert list(above[::2]) != list(above[1::2]) and above.sum() == 6  # sides alternate: 6 per pole
    assert suggest(pool, labelled[:4], q[:4], k=5).mode == "diverse"  # one pole only: no fit, cover the pool
