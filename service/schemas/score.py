"""Scoring and comparing texts, with score feedback (`routes/score.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from core.contract import MAX_SCORE_TEXTS, MAX_TRAITS, MAX_VERSION_REF_CHARS
from service.schemas.common import TEXT_SCHEMA, Quality, Strict, Text, TraitRef, check_text


class FeedbackIn(Strict):
    trait: TraitRef
    quality: Quality


# Checked in _content, not per member: a union reports every member's error, and a too-long text in a list
# would first read "Input should be a valid string" (the single-text member's complaint).
ScoreText = Annotated[str, Field(json_schema_extra=TEXT_SCHEMA)]


class ScoreIn(Strict):
    content: ScoreText | Annotated[list[ScoreText], Field(min_length=1, max_length=MAX_SCORE_TEXTS)] = Field(
        description=f"One text, or 1-{MAX_SCORE_TEXTS} texts."
    )
    version: str | None = Field(default=None, max_length=MAX_VERSION_REF_CHARS)
    explain: bool = False
    feedback: list[FeedbackIn] | None = Field(default=None, max_length=MAX_TRAITS)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            return [check_text(v, f"text {i + 1}") for i, v in enumerate(value)]
        return check_text(value)


class CompareIn(Strict):
    a: Text
    b: Text
    version: str | None = Field(default=None, max_length=MAX_VERSION_REF_CHARS)


class TraitScore(BaseModel):
    trait: str
    name: str
    score: float = Field(ge=0.0, le=1.0)
    label: str
    positive_label: str
    negative_label: str


class WordContribution(BaseModel):
    word: str
    contribution: float = Field(description="The score's change when the word is removed")
    axis: float = Field(
        description="The change on the trait's axis (poles at -1 and +1) when the word is removed"
    )
    strength: float = Field(
        description="`axis` in units of the trait's filler noise (what removing a word like 'the' does); "
        "the workbench colours a word from 3 (docs/engine-evaluation.md, Explanations)"
    )


class DecidedTraitScore(TraitScore):
    """A `POST /score` entry: the additive decision fields appear only for a trait with a threshold."""

    threshold: float | None = Field(None, description="The version's threshold for this trait, if any")
    decision: bool | None = Field(None, description="score >= threshold, present with `threshold`")


class ScoreResult(BaseModel):
    index: int
    scores: list[DecidedTraitScore]
    explanation: dict[str, list[WordContribution]] | None = None


class ScoreOut(BaseModel):
    handle: str
    version_no: int
    version_tags: list[str]
    scores: list[DecidedTraitScore] | None = None
    results: list[ScoreResult] | None = None
    explanation: dict[str, list[WordContribution]] | None = None
    feedback_buffered: int | None = None


class CompareSide(BaseModel):
    scores: list[TraitScore]


class TraitDelta(BaseModel):
    trait: str
    name: str
    delta: float


class CompareOut(BaseModel):
    handle: str
    version_no: int
    version_tags: list[str]
    a: CompareSide
    b: CompareSide
    difference: list[TraitDelta]
