"""Models: create, patch, list and read (`routes/models.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, BeforeValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from core.contract import (
    AUTO_EMBEDDER,
    DEFAULT_GOLD_THRESHOLD,
    HANDLE_PATTERN,
    HANDLE_RE,
    MAX_DEPTH,
    MAX_DESCRIPTION_CHARS,
    MAX_GOLD_RATE,
    MAX_HANDLE_CHARS,
    MAX_KEEP_UNNAMED,
    MAX_OVERLAP,
    MAX_README_CHARS,
    MAX_SOURCE_LICENSE_CHARS,
    MAX_SOURCE_TITLE_CHARS,
    MAX_UPSTREAM_SOURCES,
    MAX_URL_CHARS,
    MAX_VOTES_WANTED,
    MIN_HANDLE_CHARS,
    AcceptRule,
    ModelState,
    RunStatus,
)
from core.embedders.registry import MODEL_CHOICES, offered, refusal
from core.json_types import JsonObject
from service.schemas.common import JsonInt, Strict, integral

# core.embedders.registry.MODEL_CHOICES spelled out, so the OpenAPI document lists them (checked here).
EmbedderChoice = Literal[
    "auto",
    "e5-small-qint8",
    "blend",
    "mpnet-base",
    "minilm-qint8v2",
    "minilm",
    "e5-small",
    "e5-small-qi8@1571fc98",
    "blend:e5-small-qi8@1571fc98+mpnet-base-qi8@78c0197b",
    "mpnet-base-qi8@78c0197b",
    "minilm-l6-v2-qi8v2@8199be6f",
    "minilm-l6-v2-int8@8199be6f",
    "e5-small-q4@1571fc98",
]
assert get_args(EmbedderChoice) == MODEL_CHOICES


# The bounds before the validator, inside the union's integer branch: on an optional JsonInt pydantic writes
# them into the OpenAPI document as `ge`/`le`, which JSON Schema does not know (clients would send 0).
VotesWanted = Annotated[int, Field(ge=1, le=MAX_VOTES_WANTED), BeforeValidator(integral)]
Overlap = Annotated[float, Field(ge=0.0, le=MAX_OVERLAP, allow_inf_nan=False)]
GoldRate = Annotated[float, Field(ge=0.0, le=MAX_GOLD_RATE, allow_inf_nan=False)]
GoldThreshold = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
KeepUnnamed = Annotated[int, Field(ge=0, le=MAX_KEEP_UNNAMED), BeforeValidator(integral)]


class UpstreamSource(Strict):
    url: str = Field(min_length=1, max_length=MAX_URL_CHARS)
    title: str | None = Field(default=None, max_length=MAX_SOURCE_TITLE_CHARS)
    license: str | None = Field(default=None, max_length=MAX_SOURCE_LICENSE_CHARS)


class AutoPrune(Strict):
    keep_unnamed: KeepUnnamed | None = None
    keep_first_of_month: bool | None = None


class AutoPruneOut(BaseModel):
    keep_unnamed: int
    keep_first_of_month: bool


class ModelCreate(Strict):
    handle: str = Field(
        min_length=MIN_HANDLE_CHARS,
        max_length=MAX_HANDLE_CHARS,
        examples=["acme.tone"],
        json_schema_extra={"pattern": HANDLE_PATTERN},
    )
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    scoring_method: Literal["balanced_cosine"] = "balanced_cosine"
    kind: Literal["scoring"] = "scoring"
    max_depth: JsonInt = Field(default=1, ge=1, le=MAX_DEPTH)
    additional_terms: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    upstream_sources: list[UpstreamSource] | None = Field(default=None, max_length=MAX_UPSTREAM_SOURCES)
    readme_markdown: str | None = Field(default=None, max_length=MAX_README_CHARS)
    zero_data_retention: bool = False
    embedder: EmbedderChoice | None = Field(
        default=None,
        description="What every version of this model is trained with, chosen once: "
        f"{', '.join(MODEL_CHOICES)} (a name or its id). `blend` (addition): both embedders, e5-small-qint8 "
        "and mpnet-base, scored by the mean of their models' scores. `auto`: each training takes both "
        "embedders where the samples' median text has 3 words or more and most samples are in English, else "
        "e5-small-qint8 (the version's `embedder` says which and why). Default: "
        "the service's setting (`auto` unless it is set up otherwise).",
        examples=[AUTO_EMBEDDER],
    )
    votes_wanted: VotesWanted | None = Field(
        default=None,
        description="How many people label each pool text before it leaves everyone's suggestions (default "
        "1; e.g. 3 to measure the team's agreement on every text).",
    )
    auto_retrain: bool | None = Field(
        default=None,
        description="False pauses automatic retraining: buffered feedback accumulates and no automatic "
        "version is made until it is true again (default: true on a model one person writes, false when "
        "more than one person may write its namespace).",
    )
    blind_labelling: bool | None = Field(
        default=None,
        description="True: an annotator sees colleagues' votes, unsure marks and comments on a text only "
        "once they voted on it (default false; reviewers and owners see everything).",
    )
    review: bool | None = Field(
        default=None,
        description="True: an annotator's labels are proposals a reviewer accepts or rejects before they "
        "train (default: on when more than one person may write the namespace).",
    )
    accept_rule: AcceptRule | None = Field(
        default=None,
        description="Besides a reviewer, what accepts a pending label: `agreement` (a text's votes reach the "
        "votes wanted, at least 2, all on one pole) or `none` (default).",
    )
    overlap: Overlap | None = Field(
        default=None,
        description="The share (0-0.5) of each pool suggestion taken from texts a colleague labelled, when "
        "the request gives no `overlap` (default 0).",
    )

    @field_validator("handle")
    @classmethod
    def _handle(cls, value: str) -> str:
        if not HANDLE_RE.match(value):
            raise ValueError("handle must be '<namespace>.<name>', lowercase letters, digits, '_' and '-'")
        return value

    @field_validator("embedder", mode="before")  # before the choices are checked: say why, not only what
    @classmethod
    def _embedder(cls, value: object) -> object:
        if value is not None and not offered(value):
            raise ValueError(refusal(value))
        return value


_IMMUTABLE = ("handle", "kind", "scoring_method", "max_depth", "embedder")


class ModelPatch(Strict):
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    readme_markdown: str | None = Field(default=None, max_length=MAX_README_CHARS)
    additional_terms: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    upstream_sources: list[UpstreamSource] | None = Field(default=None, max_length=MAX_UPSTREAM_SOURCES)
    zero_data_retention: bool | None = None
    auto_prune: AutoPrune | None = Field(
        default=None, description="Auto-prune policy override; null clears it (defaults apply)."
    )
    votes_wanted: VotesWanted | None = Field(
        default=None,
        description="How many people label each pool text before it leaves everyone's suggestions (default "
        "1; e.g. 3 to measure the team's agreement on every text).",
    )
    auto_retrain: bool | None = Field(
        default=None,
        description="False pauses automatic retraining: buffered feedback accumulates and no automatic "
        "version is made until it is true again (default: true on a model one person writes, false when "
        "more than one person may write its namespace).",
    )
    blind_labelling: bool | None = Field(
        default=None,
        description="True: an annotator sees colleagues' votes, unsure marks and comments on a text only "
        "once they voted on it (default false; reviewers and owners see everything).",
    )
    review: bool | None = Field(
        default=None,
        description="True: an annotator's labels are proposals a reviewer accepts or rejects before they "
        "train (default: on when more than one person may write the namespace).",
    )
    accept_rule: AcceptRule | None = Field(
        default=None,
        description="Besides a reviewer, what accepts a pending label: `agreement` (a text's votes reach the "
        "votes wanted, at least 2, all on one pole) or `none` (default).",
    )
    overlap: Overlap | None = Field(
        default=None,
        description="The share (0-0.5) of each pool suggestion taken from texts a colleague labelled, when "
        "the request gives no `overlap` (default 0).",
    )
    shared_pool: bool | None = Field(
        default=None,
        description="False: a person's pool suggestions are their assignment alone; true (default): the "
        "shared pool follows it (addition).",
    )
    gold_rate: GoldRate | None = Field(
        default=None,
        description="The share (0-0.5) of each person's suggestions that are gold items, texts with a known "
        "answer that measure their accuracy (default 0: none; addition).",
    )
    gold_threshold: GoldThreshold | None = Field(
        default=None,
        description="A person whose accuracy on gold items is surely under it (its interval's upper end) "
        f"is flagged to the owner (default {DEFAULT_GOLD_THRESHOLD}; addition).",
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_fixed(cls, data: object) -> object:
        if isinstance(data, dict):
            if "state" in data:
                raise PydanticCustomError("state_not_patchable", "state cannot be changed by PATCH")
            for name in _IMMUTABLE:
                if name in data:
                    raise PydanticCustomError("immutable_field", "{field} cannot be changed", {"field": name})
        return data


class LastOperation(BaseModel):
    kind: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    run_id: str | None = None
    progress: JsonObject | None = None
    error: JsonObject | None = None
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
    embedder: str | None = Field(
        default=None,
        description="The id of the embedder this model's versions are trained with; null for models created "
        "before the field, which use the service's default embedder.",
    )
    votes_wanted: int = Field(default=1, description="Votes wanted per pool text (addition).")
    auto_retrain: bool = Field(
        default=True,
        description="False: automatic retraining is paused, or off as a team's model's default (addition).",
    )
    blind_labelling: bool = Field(
        default=False, description="True: annotators label blind until they voted on a text (addition)."
    )
    overlap: float = Field(
        default=0.0, description="The `overlap` of a pool suggestion that gives none (addition)."
    )
    review: bool = Field(
        default=False,
        description="True: annotators' labels train once accepted (addition, docs/api.md Review).",
    )
    accept_rule: AcceptRule = Field(default="none", description="What accepts a pending label (addition).")
    shared_pool: bool = Field(
        default=True,
        description="Whether a person's suggestions go on to the shared pool after their assignment "
        "(addition).",
    )
    gold_rate: float = Field(default=0.0, description="The share of suggestions that are gold (addition).")
    gold_threshold: float = Field(
        default=DEFAULT_GOLD_THRESHOLD, description="The accuracy a person is flagged under (addition)."
    )


class ModelPage(BaseModel):
    items: list[ModelOut]
    limit: int
    next_cursor: str | None
