"""What a calibration error means when the labels are graded, said beside it (Versions page, evaluation set).

The calibration error compares, in 10 score bins, each bin's mean score with its mean quality. With 0/1
labels the mean quality is the share of positive texts, the thing a score estimates. With graded labels
(0.7: rather positive) it is a degree, and a score that is sure of a text's pole sits further out than the
rating: a clearly positive text rated 0.7 and scored 0.95 adds 0.25. Part of the error is then there by
construction, and a reader who sees "scores stay calibrated" beside 0.18 needs that said. Usually, not
always, the error is larger than against the 0/1 poles: Wikipedia politeness requests rated 1-25
(`minilm-qint8v2`, 1,600 to train, 800 held out) gave 0.178 against the ratings and 0.148 against the
poles at shrinkage 1, 0.134 and 0.143 at 0.3, and 0.138 and 0.107 for a fit on the poles.

Whether a set's labels are graded is read off its reliability bins, which every evaluation returns: a bin's
mean quality times its count is the sum of its qualities, a whole number when every quality is 0 or 1. A
fractional sum proves a graded label; graded labels whose sums fall on whole numbers in every bin go
unnoticed (no note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.client.results import ReliabilityBin, TraitEvaluation

#: Each bin's mean quality comes rounded to 6 decimals (core/engine/evaluation.py): its sum is off by at
#: most count × 5e-7.
_ROUNDING = 1e-6


def has_graded_labels(bins: Sequence[ReliabilityBin]) -> bool:
    """Whether some quality behind these reliability bins lies strictly between 0 and 1."""
    for b in bins:
        if b.mean_quality is None or not b.count:
            continue
        total = b.mean_quality * b.count
        if abs(total - round(total)) > _ROUNDING * b.count:
            return True
    return False


def calibration_note(traits: Mapping[str, TraitEvaluation]) -> str | None:
    """The note for the traits whose labels are graded (with their calibration error); None for none."""
    graded = {
        key: t.calibration_error.value
        for key, t in sorted(traits.items())
        if t.calibration_error is not None and has_graded_labels(t.reliability)
    }
    if not graded:
        return None
    values = ", ".join(f"{key} {error:.2f}" for key, error in graded.items())
    return (
        f"**Calibration error on graded labels** ({values}). These qualities are graded (between 0 and "
        "1, not only 0 or 1), and the calibration error is measured against them: in each of 10 score "
        "bins, the mean score against the mean quality. A score says how likely a text is to be on the "
        "positive pole; a graded quality says how far towards it the text is. A clearly positive text rated "
        "0.7 and scored 0.95 adds 0.25, though its score is right about the pole. So part of this error is "
        "there by construction (a likelihood measured against a degree), and it is usually larger than the "
        "same scores get on 0/1 labels: by itself it does not mean the scores are off. Compare it between "
        "versions on the same set; how well the poles are told apart is the ROC AUC."
    )
