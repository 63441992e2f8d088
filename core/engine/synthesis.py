"""Offline synthesis of trait exemplars."""

from __future__ import annotations

from collections.abc import Iterable

from core.embedders.base import Embedder
from core.engine.types import ProgressFn, Sample, TraitSpec


def synthesize(
    traits: Iterable[TraitSpec],
    seeds: Iterable[Sample],
    *,
    synth_type: str = "from_traits",
    effort: str = "medium",
    embedder: Embedder,
    generator: object | None = None,
    progress: ProgressFn | None = None,
) -> list[Sample]:
    raise NotImplementedError
