"""Calibration: the slope that recalibrates a blend's mean logit follows the held-out labels where they are
many and its prior where they are few, and a version states its own out-of-fold calibration."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from core.embedders.base import Embedder
from core.engine import train
from core.engine.metrics import calibration_slope
from core.engine.trait_model import K_MIN, fit_temperature
from tests.support.corpus import SENTIMENT, sentiment_samples


def _held_out(n: int, k: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw scores and their sides drawn so that sigmoid(k * raw) is exactly calibrated."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(0.0, 1.0, n)
    return raw, (rng.random(n) < expit(k * raw)).astype(float)


def test_many_held_out_labels_decide_the_slope_whatever_the_prior() -> None:
    raw, q = _held_out(4000, 3.0, seed=1)
    for prior in (0.5, 3.0, 20.0):
        assert abs(np.log(fit_temperature(raw, q, prior) / 3.0)) < 0.1
    # Repeats of the same samples' held-out scores weigh as those samples, not as more of them.
    assert abs(fit_temperature(np.vstack([raw, raw, raw]), q, 3.0) - fit_temperature(raw, q, 3.0)) < 1e-6


def test_few_held_out_labels_leave_the_slope_near_its_prior_not_at_the_floor() -> None:
    """16 held-out labels that happen to show no order (what 8 samples a pole often give) say little about
    the slope: it stays near its prior instead of collapsing to a floor that scores every text near 0.5."""
    raw = np.array([-1.0, -0.5, 0.5, 1.0] * 4)
    q = np.array([1.0, 0.0, 1.0, 0.0] * 4)  # no order at all
    assert 1.5 * K_MIN < fit_temperature(raw, q, 1.0) <= 1.0


def test_the_calibration_slope_reads_scores_too_close_to_the_middle() -> None:
    raw, q = _held_out(4000, 3.0, seed=2)
    calibrated, pressed = calibration_slope(expit(3.0 * raw), q), calibration_slope(expit(1.5 * raw), q)
    assert calibrated is not None and abs(calibrated - 1.0) < 0.1
    assert pressed is not None and pressed > 1.8  # pressed towards 0.5: about 2
    assert calibration_slope(np.full(4, 0.5), np.array([1.0, 0.0, 1.0, 0.5])) is not None
    assert calibration_slope(np.full(3, 0.5), np.array([1.0, 1.0, 0.5])) is None  # one side only
    apart = np.array([[0.9, 0.8, 0.3, 0.1], [0.95, 0.6, 0.4, 0.2]])  # every positive above every negative
    assert calibration_slope(apart, np.array([1.0, 1.0, 0.0, 0.0])) is None


def test_a_version_states_its_out_of_fold_calibration(hashing: Embedder) -> None:
    metrics = train([SENTIMENT], sentiment_samples(), embedder=hashing, effort="low").metrics["sentiment"]
    assert 0.0 <= metrics["calibration_error"] <= 1.0
    assert isinstance(metrics["calibration_slope"], float) and metrics["calibration_slope"] > 0.0
    zero_shot = train([SENTIMENT], [], embedder=hashing, effort="low").metrics["sentiment"]
    assert zero_shot["calibration_slope"] is None
