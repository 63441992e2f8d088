"""Engine exceptions: each names the problem so callers can show it as is.

All derive from `EngineError` (a `ValueError`), so the service maps them to one
validation error and a notebook user sees a plain message, never a numpy trace.
"""

from __future__ import annotations

# The base and the embedders' two live beneath the engine and the embedders (core/errors.py); re-exported.
from core.errors import EmbedderUnavailableError as EmbedderUnavailableError
from core.errors import EngineError as EngineError
from core.errors import ModelFileError as ModelFileError


class EmptyTextError(EngineError):
    code = "empty_text"


class TextTooLongError(EngineError):
    code = "text_too_long"


class InvalidQualityError(EngineError):
    code = "invalid_quality"


class OnePoleTraitError(EngineError):
    code = "trait_one_pole"


class NoSamplesError(EngineError):
    code = "no_samples"


class UnknownTraitError(EngineError):
    code = "unknown_trait"


class SnapshotFormatError(EngineError):
    code = "snapshot_format"


class InvalidTextError(EngineError, TypeError):
    """A text that is not a string at all (None, a number, bytes): a `TypeError` too, as the client raises for
    one (`core.texts`)."""

    code = "invalid_text"


class NoTraitsError(EngineError):
    code = "no_traits"


class InvalidTraitError(EngineError):
    """A trait definition the engine cannot use (duplicate key, unknown aggregation)."""

    code = "invalid_trait"


class InvalidParamsError(EngineError):
    """Reused training parameters that are missing fields or out of range."""

    code = "invalid_params"


class InvalidEffortError(EngineError):
    code = "invalid_effort"


class TooFewTextsError(EngineError):
    """Discovery needs more distinct sample texts than the model has."""

    code = "too_few_texts"


class InvalidSynthTypeError(EngineError):
    """A synthesis type other than `from_traits` or `diversify`."""

    code = "invalid_synth_type"


class GeneratorError(EngineError):
    """The external text generator failed or answered with something unusable."""

    code = "generator_failed"
