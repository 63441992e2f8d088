"""Perspective API bodies (`routes/perspective.py`), with Perspective's own camelCase field names and Google's
error shape. Unknown request fields are ignored, as Perspective does."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.contract import (
    MAX_CLIENT_TOKEN_CHARS,
    MAX_HANDLE_CHARS,
    MAX_PERSPECTIVE_LANGUAGES,
    MAX_TEXT_CHARS,
    MAX_TRAITS,
)
from core.json_types import JsonObject


class _Model(BaseModel):
    # Unknown fields are ignored, as Perspective clients send fields this server has no use for
    # (`context`, `sessionId`, `communityId`, …); the known ones are strictly typed.
    model_config = ConfigDict(extra="ignore", strict=True)


class TextEntry(_Model):
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    type: str | None = None


class AttributeParameters(_Model):
    scoreType: str | None = None  # Perspective's field names, camelCase
    scoreThreshold: float | None = Field(default=None, ge=0.0, le=1.0)


class AnalyzeIn(_Model):
    comment: TextEntry
    requestedAttributes: dict[str, AttributeParameters] = Field(min_length=1, max_length=MAX_TRAITS)
    spanAnnotations: bool = False
    languages: list[str] = Field(default_factory=list, max_length=MAX_PERSPECTIVE_LANGUAGES)
    doNotStore: bool = False
    clientToken: str | None = Field(default=None, max_length=MAX_CLIENT_TOKEN_CHARS)
    model: str | None = Field(
        default=None,
        max_length=MAX_HANDLE_CHARS,
        description="Addition: the model's handle (else SCORING_PERSPECTIVE_MODEL)",
    )


class Score(_Model):
    value: float = Field(ge=0.0, le=1.0)
    type: str | None = None


class SpanScore(BaseModel):
    begin: int
    end: int
    score: Score


class AttributeScore(BaseModel):
    summaryScore: Score | None = None
    spanScores: list[SpanScore] | None = None


class SuggestAttributeScore(_Model):
    summaryScore: Score
    spanScores: list[Any] | None = None  # Any: accepted whatever it holds, not used


class SuggestScoreIn(_Model):
    comment: TextEntry
    attributeScores: dict[str, SuggestAttributeScore] = Field(min_length=1, max_length=MAX_TRAITS)
    languages: list[str] = Field(default_factory=list, max_length=MAX_PERSPECTIVE_LANGUAGES)
    clientToken: str | None = Field(default=None, max_length=MAX_CLIENT_TOKEN_CHARS)
    communityId: str | None = None
    model: str | None = Field(default=None, max_length=MAX_HANDLE_CHARS)


class AnalyzeOut(BaseModel):
    attributeScores: dict[str, AttributeScore]
    languages: list[str]
    detectedLanguages: list[str]
    clientToken: str | None = None


class SuggestScoreOut(BaseModel):
    clientToken: str | None = None


class GoogleErrorBody(BaseModel):
    code: int
    message: str
    status: str
    details: list[JsonObject] = []


class GoogleError(BaseModel):
    error: GoogleErrorBody
