"""Input checks that run before any numbers are computed.

Everything here raises an `EngineError` subclass whose message names the offending
trait, sample or text, so bad input never surfaces as a numpy error deep inside training.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from numbers import Real

from core.contract import AGGREGATIONS, MAX_TEXT_CHARS, POLE_RULE, POLES, pole_of, text_too_long_message
from core.engine.errors import (
    EmptyTextError,
    InvalidQualityError,
    InvalidTextError,
    InvalidTraitError,
    NoSamplesError,
    NoTraitsError,
    OnePoleTraitError,
    TextTooLongError,
    UnknownTraitError,
)
from core.engine.types import Sample, TraitSpec
from core.texts import as_texts


def validate_text(text: object, *, where: str = "text") -> str:
    """Return `text` stripped; reject non-strings, empty and over-long texts."""
    if not isinstance(text, str):
        raise InvalidTextError(f"{where} must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise EmptyTextError(f"{where} is empty")
    if len(stripped) > MAX_TEXT_CHARS:
        raise TextTooLongError(text_too_long_message(len(stripped), where))
    return stripped


def validate_texts(texts: object, call: str = "score", *, column: str | None = None) -> list[str]:
    """Validate a batch (a list of texts by `core.texts.as_texts`, one string a batch of one); messages say
    which position failed."""
    batch = as_texts(texts, call, column=column, single=True, not_text=InvalidTextError)
    return [validate_text(t, where=f"text {i}") for i, t in enumerate(batch)]


def validate_quality(quality: object, *, where: str) -> float:
    # Exact float/int first: the abstract Real check is slow, and training checks every sample.
    if type(quality) is not float and (isinstance(quality, bool) or not isinstance(quality, Real)):
        raise InvalidQualityError(f"{where}: quality must be a number in [0, 1], got {quality!r}")
    value = float(quality)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidQualityError(f"{where}: quality must be a number in [0, 1], got {value!r}")
    return value


def validate_traits(traits: Sequence[TraitSpec]) -> list[TraitSpec]:
    traits = list(traits)
    if not traits:
        raise NoTraitsError("no traits to train: add at least one trait")
    seen: set[str] = set()
    for trait in traits:
        if not isinstance(trait, TraitSpec):
            raise InvalidTraitError(f"expected a TraitSpec, got {type(trait).__name__}")
        if not isinstance(trait.key, str) or not trait.key:
            raise InvalidTraitError(f"trait {trait.name!r} has an empty key")
        if trait.key in seen:
            raise InvalidTraitError(f"trait key {trait.key!r} is used twice")
        if trait.aggregation not in AGGREGATIONS:
            raise InvalidTraitError(
                f"trait {trait.key!r}: aggregation must be one of {', '.join(AGGREGATIONS)}, "
                f"got {trait.aggregation!r}"
            )
        seen.add(trait.key)
    return traits


def _sample_name(index: int, sample: Sample) -> str:
    return f"sample {index}" + (f" (id {sample.id})" if sample.id is not None else "")


def validate_samples(
    traits: Sequence[TraitSpec], samples: Iterable[Sample], *, allow_empty: bool = False
) -> list[Sample]:
    """Check traits and samples together; return the samples with stripped texts and float qualities.

    `allow_empty`: a trait without samples is accepted (training makes it zero-shot). A trait whose samples
    are all neutral (quality 0.5) is not empty: it needs samples on both poles like any other.

    Raises (in this order of discovery): NoTraitsError / InvalidTraitError for the traits,
    UnknownTraitError, InvalidTextError / EmptyTextError / TextTooLongError, InvalidQualityError
    per sample, then NoSamplesError / OnePoleTraitError per trait.
    """
    traits = validate_traits(traits)
    keys = {t.key for t in traits}
    clean: list[Sample] = []
    for i, sample in enumerate(samples):
        if not isinstance(sample, Sample):
            raise InvalidTextError(f"sample {i} must be a Sample, got {type(sample).__name__}")
        name = _sample_name(i, sample)
        if sample.trait not in keys:
            raise UnknownTraitError(f"{name} refers to unknown trait {sample.trait!r}")
        text = validate_text(sample.text, where=f"{name}: text")
        quality = validate_quality(sample.quality, where=name)
        clean.append(Sample(trait=sample.trait, text=text, quality=quality, id=sample.id))

    counts = {t.key: dict.fromkeys(POLES, 0) for t in traits}  # per pole, in one pass
    for s in clean:
        counts[s.trait][pole_of(s.quality)] += 1
    for trait in traits:
        count = counts[trait.key]
        if not sum(count.values()):
            if allow_empty:
                continue
            raise NoSamplesError(f"trait {trait.key!r} has no samples")
        missing = [pole for pole in ("positive", "negative") if not count[pole]]
        if missing:
            where = (
                f"has samples on one pole only: no {missing[0]} samples"
                if len(missing) == 1
                else f"has samples on neither pole: its {count['neutral']} samples are all neutral"
            )
            raise OnePoleTraitError(
                f"trait {trait.key!r} {where} ({POLE_RULE}; it has {count['positive']} positive, "
                f"{count['negative']} negative, {count['neutral']} neutral)"
            )
    return clean
