"""Previews: what a trait's pole labels alone would score, and a draft's samples trained locally."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.contract import pole_of
from core.embedders.base import Embedder
from core.engine.pole_text import all_pole_texts
from core.engine.scorer import Scorer
from core.engine.training import train
from core.engine.types import Sample, TraitSpec


def preview_zero_shot(
    trait: TraitSpec, texts: Sequence[str], *, embedder: Embedder
) -> tuple[np.ndarray, tuple[list[str], list[str]]]:
    """Scores of `texts` on `trait` trained zero-shot, and the pole texts behind its axis.

    The trait is trained exactly as `train` does without samples, so the preview is the score the
    trait would give once trained with no samples.
    """
    result = train([trait], [], embedder=embedder, effort="low")
    scorer = Scorer.from_snapshot(result.snapshot, embedder=embedder)
    scores = scorer.score(texts)[:, 0]  # a wrong shape of texts is refused there (core.texts)
    return scores, all_pole_texts(trait)


def draft_scorer(
    traits: Sequence[TraitSpec], samples: Sequence[Sample], *, embedder: Embedder
) -> tuple[Scorer, list[str]]:
    """A scorer trained here (effort "low") on a draft's current samples, and the keys of the traits skipped
    because their samples do not cover both poles (neutral ones, quality 0.5, are on neither). A trait
    without samples is previewed zero-shot, from its pole labels and description. Raises ValueError when
    every trait is skipped."""
    usable: list[TraitSpec] = []
    skipped: list[str] = []
    for t in traits:
        own = [s.quality for s in samples if s.trait == t.key]
        if not own or {"positive", "negative"} <= {pole_of(q) for q in own}:
            usable.append(t)
        else:
            skipped.append(t.key)
    if not usable:
        raise ValueError(
            "Every trait has samples on one pole only (or only neutral ones): add the other pole's before "
            "previewing."
        )
    keys = {t.key for t in usable}
    result = train(usable, [s for s in samples if s.trait in keys], embedder=embedder, effort="low")
    return Scorer.from_snapshot(result.snapshot, embedder), skipped
