"""Zero-shot preview: what a trait's pole labels alone would score, before it is added or trained."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.embedders.base import Embedder
from core.engine.pole_text import all_pole_texts
from core.engine.scorer import Scorer
from core.engine.training import train
from core.engine.types import TraitSpec


def preview_zero_shot(
    trait: TraitSpec, texts: Sequence[str], *, embedder: Embedder
) -> tuple[np.ndarray, tuple[list[str], list[str]]]:
    """Scores of `texts` on `trait` trained zero-shot, and the pole texts behind its axis.

    The trait is trained exactly as `train` does without samples, so the preview is the score the
    trait would give once trained with no samples.
    """
    result = train([trait], [], embedder=embedder, effort="low")
    scores = Scorer.from_snapshot(result.snapshot, embedder=embedder).score(list(texts))[:, 0]
    return scores, all_pole_texts(trait)
