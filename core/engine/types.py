"""Plain data the engine trains on and returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from core.contract import Aggregation, DiscoverEffort, TrainEffort

__all__ = ["Aggregation", "DiscoverEffort", "TrainEffort"]  # core.contract's, re-exported for the engine

#: progress(fraction in [0, 1], phase name) - called from long operations.
ProgressFn = Callable[[float, str], None]
#: A JSON object: a snapshot, a version's metrics and parameters, a build's manifest, a body the engine sends
#: or returns. Its values are whatever JSON holds, known only where each one is read: the one boundary where
#: the engine and the embedders leave a type open (Any).
JsonObject: TypeAlias = dict[str, Any]


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


@dataclass
class DiscoveredTrait:
    spec: TraitSpec
    samples: list[Sample]  # pole exemplars labelled from the axis (quality 1.0 / 0.0)
    explained_variance: float = 0.0
