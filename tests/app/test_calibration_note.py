"""The note beside a calibration error on graded labels: when it is said, and what it says. The evaluations
are the engine's own (`core.engine.evaluation.evaluate_trait`), read through the client's model."""

from __future__ import annotations

import numpy as np

from app.evaluation.calibration_note import calibration_note, has_graded_labels
from core.client.results import TraitEvaluation
from core.engine.evaluation import evaluate_trait


def evaluated(quality: np.ndarray, seed: int) -> TraitEvaluation:
    """A version's evaluation on these labels: scores that know each text's pole, with noise."""
    rng = np.random.default_rng(seed)
    scores = np.clip(np.where(quality >= 0.5, 0.85, 0.15) + rng.normal(0, 0.1, len(quality)), 0, 1)
    return TraitEvaluation.model_validate(evaluate_trait(scores, quality, resamples=50))


def test_no_note_on_labels_of_0_and_1() -> None:
    for n, seed in ((40, 0), (5000, 1)):  # many items per bin too: the bins' rounding is not a graded label
        rng = np.random.default_rng(seed)
        binary = evaluated(rng.integers(0, 2, n).astype(float), seed)
        assert not has_graded_labels(binary.reliability)
        assert calibration_note({"formality": binary}) is None


def test_graded_labels_get_the_note_with_what_it_means() -> None:
    rng = np.random.default_rng(2)
    ratings = rng.integers(1, 26, 400)  # a 1-25 scale mapped to quality, as the politeness raters' is
    graded = evaluated((ratings - 1) / 24, 2)
    binary = evaluated(rng.integers(0, 2, 400).astype(float), 3)
    assert has_graded_labels(graded.reliability)
    assert graded.calibration_error is not None
    note = calibration_note({"politeness": graded, "formality": binary})
    assert note is not None
    # It names the graded trait with its error, and only that one.
    assert f"(politeness {graded.calibration_error.value:.2f})" in note and "formality" not in note
    assert "measured against them" in note and "graded (between 0 and 1, not only 0 or 1)" in note
    assert "there by construction" in note and "usually larger than the same scores get on 0/1 labels" in note
    assert "by itself it does not mean the scores are off" in note
    assert "Compare it between versions on the same set" in note and "ROC AUC" in note


def test_a_single_graded_label_is_enough() -> None:
    quality = np.array([0.0, 1.0] * 30 + [0.8])  # one 0.8 among 0s and 1s (the demo data has such rows)
    assert has_graded_labels(evaluated(quality, 4).reliability)
