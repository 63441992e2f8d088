"""The local scoring engine: train, score, explain, discover, synthesize, count votes. No web frameworks here.

- `train(specs, samples, embedder=…)` → `TrainingResult`; `dump_snapshot`/`load_snapshot` keep its snapshot
- `Scorer.from_snapshot(snapshot)`: scores texts on every trait of a snapshot
- `preview_zero_shot`: a trait's scores before any sample; `discover`: traits from samples;
  `synthesize`: samples from traits
- `count_votes`, `vote_counts`, `training_samples`: several annotators' labels; `trait_agreement`,
  `human_ceiling`: how far they agree
- `validate_samples`, `validate_text`; the errors (`EngineError` and its subclasses)

`dir(core.engine)` lists every name (`__all__`).

Its names load on first use (PEP 562): `core.engine.errors` and the other light modules are imported by the
client, the service's start-up and the workbench's pages, and importing the package itself must not bring in
scikit-learn and SciPy (seconds of a cold start on two busy cores).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from core.contract import MAX_TEXT_CHARS

if TYPE_CHECKING:
    from core.engine.agreement import TraitAgreement, trait_agreement
    from core.engine.ceiling import Ceiling, human_ceiling
    from core.engine.discovery import discover
    from core.engine.errors import (
        EmbedderUnavailableError,
        EmptyTextError,
        EngineError,
        InvalidEffortError,
        InvalidParamsError,
        InvalidQualityError,
        InvalidTextError,
        InvalidTraitError,
        ModelFileError,
        NoSamplesError,
        NoTraitsError,
        OnePoleTraitError,
        SnapshotFormatError,
        TextTooLongError,
        UnknownTraitError,
    )
    from core.engine.preview import preview_zero_shot
    from core.engine.scorer import Scorer
    from core.engine.snapshot import dump_snapshot, load_snapshot
    from core.engine.synthesis import synthesize
    from core.engine.training import SEARCH_PLANS, train
    from core.engine.trait_model import BalancedCosineTrait
    from core.engine.types import DiscoveredTrait, ProgressFn, Sample, TrainingResult, TraitSpec
    from core.engine.validation import validate_samples, validate_text
    from core.engine.votes import CountedText, Vote, count_votes, training_samples, vote_counts

# Each public name and the module that defines it.
_WHERE = {
    "TraitAgreement": "core.engine.agreement",
    "trait_agreement": "core.engine.agreement",
    "Ceiling": "core.engine.ceiling",
    "human_ceiling": "core.engine.ceiling",
    "discover": "core.engine.discovery",
    "EmbedderUnavailableError": "core.engine.errors",
    "EmptyTextError": "core.engine.errors",
    "EngineError": "core.engine.errors",
    "InvalidEffortError": "core.engine.errors",
    "InvalidParamsError": "core.engine.errors",
    "InvalidQualityError": "core.engine.errors",
    "InvalidTextError": "core.engine.errors",
    "InvalidTraitError": "core.engine.errors",
    "ModelFileError": "core.engine.errors",
    "NoSamplesError": "core.engine.errors",
    "NoTraitsError": "core.engine.errors",
    "OnePoleTraitError": "core.engine.errors",
    "SnapshotFormatError": "core.engine.errors",
    "TextTooLongError": "core.engine.errors",
    "UnknownTraitError": "core.engine.errors",
    "preview_zero_shot": "core.engine.preview",
    "Scorer": "core.engine.scorer",
    "dump_snapshot": "core.engine.snapshot",
    "load_snapshot": "core.engine.snapshot",
    "synthesize": "core.engine.synthesis",
    "SEARCH_PLANS": "core.engine.training",
    "train": "core.engine.training",
    "BalancedCosineTrait": "core.engine.trait_model",
    "DiscoveredTrait": "core.engine.types",
    "ProgressFn": "core.engine.types",
    "Sample": "core.engine.types",
    "TrainingResult": "core.engine.types",
    "TraitSpec": "core.engine.types",
    "validate_samples": "core.engine.validation",
    "validate_text": "core.engine.validation",
    "CountedText": "core.engine.votes",
    "Vote": "core.engine.votes",
    "count_votes": "core.engine.votes",
    "training_samples": "core.engine.votes",
    "vote_counts": "core.engine.votes",
}


def __getattr__(name: str) -> Any:  # Any: a lazy attribute is whatever its module defines
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value  # once: later lookups find it directly
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "MAX_TEXT_CHARS",
    "SEARCH_PLANS",
    "BalancedCosineTrait",
    "Ceiling",
    "CountedText",
    "DiscoveredTrait",
    "EmbedderUnavailableError",
    "EmptyTextError",
    "EngineError",
    "InvalidEffortError",
    "InvalidParamsError",
    "InvalidQualityError",
    "InvalidTextError",
    "InvalidTraitError",
    "ModelFileError",
    "NoSamplesError",
    "NoTraitsError",
    "OnePoleTraitError",
    "ProgressFn",
    "Sample",
    "Scorer",
    "SnapshotFormatError",
    "TextTooLongError",
    "TraitAgreement",
    "TraitSpec",
    "TrainingResult",
    "UnknownTraitError",
    "Vote",
    "count_votes",
    "discover",
    "dump_snapshot",
    "human_ceiling",
    "load_snapshot",
    "preview_zero_shot",
    "synthesize",
    "train",
    "trait_agreement",
    "training_samples",
    "validate_samples",
    "validate_text",
    "vote_counts",
]
