"""The Label page's curve point: out-of-fold ROC-AUC of a trait's labels (core.engine.label_curve)."""

from __future__ import annotations

import numpy as np

from core.engine.label_curve import out_of_fold_auc


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_separable_labels_score_high_and_noise_near_half() -> None:
    rng = np.random.default_rng(0)
    direction = _unit(rng.normal(size=(1, 32)))[0]
    q = np.array([1.0, 0.0] * 30)
    X = _unit(rng.normal(size=(60, 32)) + np.outer(np.where(q > 0.5, 2.0, -2.0), direction))
    assert (out_of_fold_auc(X, q) or 0.0) > 0.95
    noise = out_of_fold_auc(_unit(rng.normal(size=(60, 32))), q)
    assert noise is not None and 0.2 < noise < 0.8


def test_no_point_until_each_pole_has_two_labels() -> None:
    X = _unit(np.random.default_rng(1).normal(size=(5, 8)))
    assert out_of_fold_auc(X, np.array([1.0, 1.0, 1.0, 1.0, 0.0])) is None
    assert out_of_fold_auc(X[:4], np.array([1.0, 1.0, 0.0, 0.0])) is not None
