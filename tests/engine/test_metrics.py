"""The one calibration-error and F1 definition (`core.engine.metrics`), against hand counts and sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from core.engine.metrics import expected_calibration_error, f1


def test_calibration_error_is_the_bin_weighted_gap_between_mean_score_and_mean_quality() -> None:
    # Bin [0.1, 0.2): scores 0.1, 0.1 vs qualities 0, 1 -> gap |0.1 - 0.5| = 0.4 over 2 of 4 items.
    # Bin [0.9, 1.0]: scores 0.9, 1.0 vs qualities 1, 1 -> gap |0.95 - 1| = 0.05 over 2 of 4 items.
    scores = np.array([0.1, 0.1, 0.9, 1.0])
    quality = np.array([0.0, 1.0, 1.0, 1.0])
    assert float(expected_calibration_error(scores, quality)) == pytest.approx(0.5 * 0.4 + 0.5 * 0.05)
    assert float(expected_calibration_error(quality, quality)) == 0.0  # scores equal to labels: no gap


def test_calibration_error_and_f1_give_one_value_per_resample_row() -> None:
    rng = np.random.default_rng(3)
    scores, quality = rng.random(50), (rng.random(50) > 0.5).astype(float)
    rows = np.stack([scores, scores[::-1]])
    targets = np.stack([quality, quality[::-1]])
    both = expected_calibration_error(rows, targets)
    assert both.shape == (2,)
    assert both[0] == pytest.approx(float(expected_calibration_error(scores, quality)))
    pred, y = scores >= 0.5, quality >= 0.5
    assert float(f1(pred, y)) == pytest.approx(f1_score(y, pred))
    assert f1(np.stack([pred, ~pred]), np.stack([y, y])).tolist() == pytest.approx(
        [f1_score(y, pred), f1_score(y, ~pred)]
    )
    none = np.zeros(5, dtype=bool)
    assert float(f1(none, none)) == 0.0  # no positive predicted or labelled: 0, not a division by zero
