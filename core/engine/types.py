"""Plain data the engine trains on and returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.contract import Aggregation, DiscoverEffort, TrainEffort
from core.json_types import JsonObject

# core.contract's and core.json_types' names, re-exported for the engine
__all__ = ["Aggregation", "DiscoverEffort", "JsonObject", "TrainEffort"]

#: progress(fraction in [0, 1], phase name) - called from long operations.
ProgressFn = Callable[[float, str], None]


@dataclass(frozen=True)
class TraitSpec:
    key: str
    name: str
    positive_label: str
    negative_label: str
    description: str = ""
    aggregation: Aggregation = "mean"


@dataclass(frozen=True)
class Sample:
    """One labelled text. `quality` 1.0 = positive pole, 0.0 = negative pole."""

    trait: str  # trait key
    text: str
    quality: float
    id: int | None = None


@dataclass
class TrainingResult:
    snapshot: JsonObject  # see core.engine.snapshot
    metrics: dict[str, JsonObject]  # per trait key
    param_hash: str
    params: dict[str, JsonObject] = field(default_factory=dict)  # chosen per trait
    #: Per trait with folds: (held-out scores of every repeat, the qualities), for a blend's own figures.
    held_out: dict[str, tuple[Any, Any]] = field(default_factory=dict)


@dataclass
class DiscoveredTrait:
    spec: TraitSpec
    samples: list[Sample]  # pole exemplars labelled from the axis (quality 1.0 / 0.0)
    explained_variance: float = 0.0
