"""The local scoring engine: train, score, explain, discover and synthesize. No web frameworks here."""

from core.contract import MAX_TEXT_CHARS
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

__all__ = [
    "MAX_TEXT_CHARS",
    "SEARCH_PLANS",
    "BalancedCosineTrait",
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
    "TraitSpec",
    "TrainingResult",
    "UnknownTraitError",
    "discover",
    "dump_snapshot",
    "load_snapshot",
    "preview_zero_shot",
    "synthesize",
    "train",
    "validate_samples",
    "validate_text",
]
