"""Request and response bodies (the OpenAPI document is generated from these)."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from core.engine.errors import EngineError

MAX_TEXT_CHARS = 20_000
HANDLE_RE = re.compile(r"^([a-z0-9][a-z0-9_-]{0,62})\.([a-z0-9][a-z0-9_-]{0,62})$")
TAG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
VERSION_NO_RE = re.compile(r"^v(\d+)$")

ModelState = Literal["draft", "busy", "ready", "failed", "archived"]
TrainEffort = Literal["low", "medium", "high", "max"]
DiscoverEffort = Literal["low", "medium", "high", "xhigh", "max"]
Aggregation = Literal["mean", "max", "min"]
Provenance = Literal["authored", "synthesized", "discovered", "feedback"]
Label = Annotated[str, Field(min_length=1, max_length=100)]


class Strict(BaseModel):
    """Request bodies: unknown fields and loosely typed values are refused. `"0.5"` is not a quality and `1`
    is not `true` (zero-data-retention must never be switched by a guess); an integer is still a number."""

    model_config = ConfigDict(extra="forbid", strict=True)


def check_text(value: str) -> str:
    """The engine's text rule, reported with the engine's error code."""
    from core.engine import validate_text

    try:
        return validate_text(value)
    except EngineError as exc:
        raise PydanticCustomError(exc.code, str(exc)) from None


# ---- models -------------------------------------------------------------------------------------


class UpstreamSource(Strict):
    url: str = Field(min_length=1, max_length=2000)
    title: str | None = Field(default=None, max_length=500)
    license: str | None = Field(default=None, max_length=200)


class AutoPrune(Strict):
    keep_unnamed: int | None = Field(default=None, ge=0, le=100_000)
    keep_first_of_month: bool | None = None


class AutoPruneOut(BaseModel):
    keep_unnamed: int
    keep_first_of_month: bool


class ModelCreate(Strict):
    handle: str = Field(min_length=3, max_length=127, examples=["acme.tone"])
    description: str = Field(default="", max_length=10_000)
    scoring_method: Literal["balanced_cosine"] = "balanced_cosine"
    kind: Literal["scoring"] = "scoring"
    max_depth: int = Field(default=1, ge=1, le=8)
    additional_terms: str | None = Field(default=None, max_length=10_000)
    upstream_sources: list[UpstreamSource] | None = Field(default=None, max_length=100)
    readme_markdown: str | None = Field(default=None, max_length=100_000)
    zero_data_retention: bool = False

    @field_validator("handle")
    @classmethod
    def _handle(cls, value: str) -> str:
        if not HANDLE_RE.match(value):
            raise ValueError("handle must be '<namespace>.<name>', lowercase letters, digits, '_' and '-'")
        return value


_IMMUTABLE = ("handle", "kind", "scoring_method", "max_depth")


class ModelPatch(Strict):
    description: str | None = Field(default=None, max_length=10_000)
    readme_markdown: str | None = Field(default=None, max_length=100_000)
    additional_terms: str | None = Field(default=None, max_length=10_000)
    upstream_sources: list[UpstreamSource] | None = Field(default=None, max_length=100)
    zero_data_retention: bool | None = None
    auto_prune: AutoPrune | None = Field(
        default=None, description="Auto-prune policy override; null clears it (defaults apply)."
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_fixed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "state" in data:
                raise PydanticCustomError("state_not_patchable", "state cannot be changed by PATCH")
            for name in _IMMUTABLE:
                if name in data:
                    raise PydanticCustomError("immutable_field", "{field} cannot be changed", {"field": name})
        return data


class LastOperation(BaseModel):
    kind: str
    status: Literal["queued", "running", "succeeded", "failed"]
    started_at: datetime
    finished_at: datetime | None = None
    run_id: str | None = None
    progress: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    # A queued run's place in line, 1 = the next to start once a worker is free; null when not queued.
    queue_position: int | None = None


class ModelOut(BaseModel):
    handle: str
    scoring_method: str
    description: str
    state: ModelState
    kind: str
    traits: list[str]
    current_version_id: int | None
    version_no: int | None
    version_tags: list[str]
    zero_data_retention: bool
    last_operation: LastOperation | None
    created_at: datetime
    updated_at: datetime
    max_depth: int
    additional_terms: str | None
    upstream_sources: list[UpstreamSource] | None
    readme_markdown: str | None
    auto_prune: AutoPruneOut | None
    sample_count: int
    buffered_feedback: int


class ModelPage(BaseModel):
    items: list[ModelOut]
    limit: int
    next_cursor: str | None


class Deleted(BaseModel):
    handle: str
    deleted: bool


# ---- traits ---------------------------------------------------------------------------------------


class TraitIn(Strict):
    name: str = Field(min_length=1, max_length=100)
    positive_label: Label
    negative_label: Label
    description: str = Field(default="", max_length=10_000)
    aggregation: Aggregation = "mean"

    @field_validator("name", "positive_label", "negative_label")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class TraitsIn(Strict):
    traits: list[TraitIn] = Field(min_length=1, max_length=50)


class TraitPatch(Strict):
    name: str | None = Field(default=None, min_length=1, max_length=100)
    description: str | None = Field(default=None, max_length=10_000)
    positive_label: str | None = Field(default=None, min_length=1, max_length=100)
    negative_label: str | None = Field(default=None, min_length=1, max_length=100)
    aggregation: Aggregation | None = None

    @field_validator("name", "positive_label", "negative_label")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value.strip() if value is not None else None


class AnchorIds(BaseModel):
    positive: list[int] = []
    negative: list[int] = []


class TraitOut(BaseModel):
    key: str
    name: str
    positive_label: str
    negative_label: str
    sample_count: int
    positive_samples: int
    negative_samples: int
    description: str
    kind: Literal["extrinsic", "intrinsic"]
    aggregation: Aggregation
    discrimination: float
    explained_variance: float
    anchor_sample_ids: AnchorIds | dict[str, Any]


class TraitsOut(BaseModel):
    traits: list[TraitOut]


# ---- samples --------------------------------------------------------------------------------------


class SampleIn(Strict):
    trait: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS + 10_000)
    quality: float = Field(ge=0.0, le=1.0)
    source_url: str | None = Field(default=None, max_length=2000)

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        return check_text(value)

    @field_validator("quality")
    @classmethod
    def _quality(cls, value: float) -> float:
        if math.isnan(value):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1]")
        return value


class SamplesIn(Strict):
    samples: list[SampleIn] = Field(min_length=1, max_length=500)


class SampleIds(BaseModel):
    ids: list[int]


class SampleOut(BaseModel):
    id: int
    trait: str
    text: str
    quality: float
    provenance: Provenance
    source_url: str | None
    content_sha256: str
    created_at: datetime


class SamplePage(BaseModel):
    items: list[SampleOut]
    limit: int
    next_cursor: str | None


# ---- runs -----------------------------------------------------------------------------------------


class TrainIn(Strict):
    effort: TrainEffort | None = None
    reoptimize_params: bool = False


class DiscoverIn(Strict):
    effort: DiscoverEffort | None = None


class SynthesizeIn(Strict):
    synth_type: Literal["from_traits", "diversify"] = Field(
        default="from_traits", description="`enrich` is not supported (422)."
    )
    effort: DiscoverEffort | None = None


class RunStarted(BaseModel):
    state: ModelState
    run_id: str | None


# ---- versions -------------------------------------------------------------------------------------


class VersionOut(BaseModel):
    version_id: int
    version_no: int
    triggered_by: Literal["train", "retune", "retrain_buffered", "backfill"]
    param_hash: str
    sample_count: int
    created_at: datetime
    run_id: str | None
    metrics: dict[str, Any]
    tags: list[str]
    snapshot: dict[str, Any] | None = Field(default=None, description="Omitted for scoring-scope keys.")


class VersionPage(BaseModel):
    items: list[VersionOut]
    limit: int
    next_cursor: str | None


class Tagged(BaseModel):
    handle: str
    tag: str
    version_no: int


class Untagged(BaseModel):
    handle: str
    tag: str
    deleted: bool


# ---- scoring --------------------------------------------------------------------------------------


class FeedbackIn(Strict):
    trait: str = Field(min_length=1, max_length=100)
    quality: float = Field(ge=0.0, le=1.0)


ScoreText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS + 10_000)]


class ScoreIn(Strict):
    content: ScoreText | list[ScoreText] = Field(description="One text, or 1-100 texts.")
    version: str | None = Field(default=None, max_length=64)
    explain: bool = False
    feedback: list[FeedbackIn] | None = Field(default=None, max_length=50)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            if not 1 <= len(value) <= 100:
                raise ValueError("content must hold 1 to 100 texts")
            return [check_text(v) for v in value]
        return check_text(value)


class CompareIn(Strict):
    a: ScoreText
    b: ScoreText
    version: str | None = Field(default=None, max_length=64)

    @field_validator("a", "b")
    @classmethod
    def _text(cls, value: str) -> str:
        return check_text(value)


class TraitScore(BaseModel):
    trait: str
    name: str
    score: float = Field(ge=0.0, le=1.0)
    label: str
    positive_label: str
    negative_label: str


class WordContribution(BaseModel):
    word: str
    contribution: float


class ScoreResult(BaseModel):
    index: int
    scores: list[TraitScore]
    explanation: dict[str, list[WordContribution]] | None = None


class ScoreOut(BaseModel):
    handle: str
    version_no: int
    version_tags: list[str]
    scores: list[TraitScore] | None = None
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


class Health(BaseModel):
    status: str
    version: str
