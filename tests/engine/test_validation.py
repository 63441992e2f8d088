"""Bad input gets an EngineError naming the problem, before any numbers are computed."""

from __future__ import annotations

from typing import Any

import pytest

from core.embedders.base import Embedder
from core.engine import (
    MAX_TEXT_CHARS,
    EmptyTextError,
    EngineError,
    InvalidQualityError,
    InvalidTextError,
    InvalidTraitError,
    NoSamplesError,
    NoTraitsError,
    OnePoleTraitError,
    Sample,
    TextTooLongError,
    TraitSpec,
    UnknownTraitError,
    train,
    validate_samples,
    validate_text,
)

TONE = TraitSpec("tone", "Tone", "warm", "cold")
GOOD = [Sample("tone", "warm and friendly", 1.0, id=1), Sample("tone", "cold and distant", 0.0, id=2)]


def test_validate_text_strips_and_checks_length() -> None:
    assert validate_text("  hello \n") == "hello"
    assert validate_text("x" * MAX_TEXT_CHARS) == "x" * MAX_TEXT_CHARS
    # The limit applies after trimming.
    assert validate_text("  " + "x" * MAX_TEXT_CHARS + "  ") == "x" * MAX_TEXT_CHARS
    with pytest.raises(TextTooLongError, match="20,001 characters; the limit is 20,000"):
        validate_text("x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(EmptyTextError, match="empty"):
        validate_text(" \t\n")
    with pytest.raises(InvalidTextError, match="bytes"):
        validate_text(b"hello")


def test_validate_samples_returns_clean_copies() -> None:
    clean = validate_samples([TONE], [Sample("tone", "  warm  ", 1), Sample("tone", "cold", 0)])
    assert clean == [Sample("tone", "warm", 1.0), Sample("tone", "cold", 0.0)]
    assert all(isinstance(s.quality, float) for s in clean)


@pytest.mark.parametrize("quality", [1.5, -0.1, float("nan"), float("inf"), "0.5", None, True])
def test_quality_outside_unit_interval_names_the_sample(quality: Any) -> None:
    samples = [*GOOD, Sample("tone", "lukewarm", quality, id=77)]
    needle = r"sample 2 \(id 77\): quality must be a number in \[0, 1\]"
    with pytest.raises(InvalidQualityError, match=needle):
        validate_samples([TONE], samples)


def test_quality_error_without_id_names_the_index() -> None:
    with pytest.raises(InvalidQualityError, match=r"^sample 0: quality .* nan"):
        validate_samples([TONE], [Sample("tone", "warm", float("nan")), *GOOD])


def test_one_pole_trait_is_named() -> None:
    samples = [*GOOD, Sample("other", "only positive", 1.0), Sample("other", "neutral", 0.5)]
    other = TraitSpec("other", "Other", "a", "b")
    with pytest.raises(OnePoleTraitError, match="trait 'other' has samples on one pole only: no negative"):
        validate_samples([TONE, other], samples)
    with pytest.raises(OnePoleTraitError, match="no positive"):
        validate_samples([TONE], [Sample("tone", "cold", 0.0), Sample("tone", "colder", 0.49)])


def test_neutral_samples_count_toward_neither_pole() -> None:
    """Quality 0.5 used to count as positive: beside negative samples it made a 'trainable' trait."""
    negative = [Sample("tone", "cold", 0.0), Sample("tone", "cool", 0.2)]
    with pytest.raises(OnePoleTraitError, match=r"no positive samples .* 0 positive, 2 negative, 1 neutral"):
        validate_samples([TONE], [*negative, Sample("tone", "ok", 0.5)])
    neutral = [Sample("tone", "fine", 0.5), Sample("tone", "ok", 0.5)]
    with pytest.raises(OnePoleTraitError, match="samples on neither pole: its 2 samples are all neutral"):
        validate_samples([TONE], neutral, allow_empty=True)  # not empty, and not zero-shot either


def test_trait_without_samples_unknown_trait_and_no_traits() -> None:
    other = TraitSpec("other", "Other", "a", "b")
    with pytest.raises(NoSamplesError, match="trait 'other' has no samples"):
        validate_samples([TONE, other], GOOD)
    with pytest.raises(UnknownTraitError, match="unknown trait 'mood'"):
        validate_samples([TONE], [*GOOD, Sample("mood", "happy", 1.0, id=9)])
    with pytest.raises(NoTraitsError):
        validate_samples([], GOOD)


def test_bad_trait_definitions() -> None:
    with pytest.raises(InvalidTraitError, match="used twice"):
        validate_samples([TONE, TONE], GOOD)
    with pytest.raises(InvalidTraitError, match="median"):
        median = TraitSpec("tone", "Tone", "warm", "cold", aggregation="median")  # type: ignore[arg-type]  # the error
        validate_samples([median], GOOD)


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        ("", EmptyTextError, r"sample 1 \(id 5\): text is empty"),
        ("x" * (MAX_TEXT_CHARS + 5), TextTooLongError, "20,005 characters"),
        (None, InvalidTextError, "NoneType"),
    ],
)
def test_bad_sample_texts_are_named(text: Any, error: type, needle: str) -> None:
    with pytest.raises(error, match=needle):
        validate_samples([TONE], [GOOD[0], Sample("tone", text, 0.0, id=5), GOOD[1]])


def test_train_validates_before_embedding(counting: Any) -> None:
    with pytest.raises(OnePoleTraitError):
        train([TONE], [GOOD[0]], embedder=counting)
    with pytest.raises(InvalidQualityError):
        train([TONE], [*GOOD, Sample("tone", "meh", float("nan"))], embedder=counting)
    assert counting.calls == []  # nothing was embedded


def test_every_engine_error_is_a_value_error_with_a_code(hashing: Embedder) -> None:
    with pytest.raises(EngineError) as info:
        train([TONE], [GOOD[0]], embedder=hashing)
    assert isinstance(info.value, ValueError) and info.value.code == "trait_one_pole"
