"""Request and response bodies (the OpenAPI document is generated from these)."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from core.contract import (
    ANNOTATOR_PATTERN,
    ANNOTATOR_RE,
    DEFAULT_EMBEDDER,
    HANDLE_PATTERN,
    HANDLE_RE,
    MAX_ANNOTATOR_CHARS,
    MAX_DEPTH,
    MAX_DESCRIPTION_CHARS,
    MAX_EVAL_ITEMS_PER_REQUEST,
    MAX_HANDLE_CHARS,
    MAX_KEEP_UNNAMED,
    MAX_LABEL_CHARS,
    MAX_OVERLAP,
    MAX_POOL_TEXTS_PER_REQUEST,
    MAX_PREVIEW_TEXTS,
    MAX_README_CHARS,
    MAX_SAMPLES_PER_REQUEST,
    MAX_SCORE_TEXTS,
    MAX_SOURCE_LICENSE_CHARS,
    MAX_SOURCE_TITLE_CHARS,
    MAX_TEXT_CHARS,
    MAX_TRAITS,
    MAX_UPSTREAM_SOURCES,
    MAX_URL_CHARS,
    MAX_VERSION_REF_CHARS,
    MIN_HANDLE_CHARS,
    SUGGESTIONS,
    Aggregation,
    DiscoverEffort,
    KeyScope,
    ModelState,
    Provenance,
    RunStatus,
    SuggestMode,
    SynthType,
    TrainEffort,
    TraitKind,
    VersionTrigger,
    text_too_long_message,
)
from core.embedders.registry import MODEL_CHOICES
from core.engine import validate_text
from core.engine.errors import EngineError
from core.json_types import JsonObject

# The same rules as JSON Schema patterns (ECMA syntax) for the OpenAPI document, so generated clients and
# schemathesis know them: no NUL anywhere (service.app adds it to every string), and not blank.
NO_NUL_PATTERN = "^[^\\x00]*$"
# What Python's str.strip() removes, spelt out: `\s` differs between regex engines (\x1c-\x1f, \x85, \ufeff).
_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
NOT_BLANK_PATTERN = f"^[^\\x00]*[^{_SPACE}\\x00][^\\x00]*$"
_NOT_BLANK: JsonDict = {"pattern": NOT_BLANK_PATTERN}
# Text no database can store as given (PostgreSQL refuses NUL; no UTF-8 encodes a lone surrogate).
UNSTORABLE_RE = re.compile("[\x00\ud800-\udfff]")

Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=_NOT_BLANK)]
# core.embedders.registry.MODEL_CHOICES spelled out, so the OpenAPI document lists them (checked here).
EmbedderChoice = Literal[
    "e5-small-qint8",
    "minilm-qint8v2",
    "minilm",
    "e5-small",
    "hashing",
    "e5-small-qi8@1571fc98",
    "minilm-l6-v2-qi8v2@8199be6f",
    "minilm-l6-v2-int8@8199be6f",
    "e5-small-q4@1571fc98",
    "hashing-v1-512",
]
assert get_args(EmbedderChoice) == MODEL_CHOICES


def _integral(value: object) -> object:
    # JSON has one number type and JSON Schema's "integer" is any number without a fraction, so 4.0 is 4;
    # 4.5, "4" and true are still refused by the strict int check that follows.
    if type(value) is float and value.is_integer():
        return int(value)
    return value


#: A request integer: 4 or 4.0, nothing else.
JsonInt = Annotated[int, BeforeValidator(_integral)]


class Strict(BaseModel):
    """Request bodies: unknown fields and loosely typed values are refused. `"0.5"` is not a quality and `1`
    is not `true` (zero-data-retention must never be switched by a guess); an integer is still a number."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="before")  # before the type check: pydantic words surrogates oddly
    @classmethod
    def _storable(cls, value: object) -> object:
        if has_unstorable(value):
            raise PydanticCustomError(
                "invalid_character", "must not contain NUL characters (\\u0000) or lone surrogates"
            )
        return value


def has_unstorable(value: object) -> bool:
    """Whether a string (or a list of them) holds a character one of the databases cannot store."""
    if isinstance(value, str):
        return UNSTORABLE_RE.search(value) is not None
    if isinstance(value, list):
        return any(has_unstorable(v) for v in value)
    return False


def check_text(value: str, where: str = "text") -> str:
    """The engine's text rule, reported with the engine's error code; the length is counted as sent (the
    schema's maxLength, and no work on a longer string), then the engine trims and checks it."""
    if len(value) > MAX_TEXT_CHARS:
        message = text_too_long_message(len(value), where)
        raise PydanticCustomError("text_too_long", message)

    try:
        return validate_text(value, where=where)
    except EngineError as exc:
        raise PydanticCustomError(exc.code, str(exc)) from None


# The schema states the documented rule (1-20,000 characters, not blank); check_text alone enforces it, so a
# too-long or empty text is always `text_too_long` / `empty_text` with the same sentence (a length bound in
# Field would answer first, with pydantic's words).
_TEXT_SCHEMA: JsonDict = {"minLength": 1, "maxLength": MAX_TEXT_CHARS, **_NOT_BLANK}
Text = Annotated[str, Field(json_schema_extra=_TEXT_SCHEMA), AfterValidator(check_text)]


# ---- models -------------------------------------------------------------------------------------


class UpstreamSource(Strict):
    url: str = Field(min_length=1, max_length=MAX_URL_CHARS)
    title: str | None = Field(default=None, max_length=MAX_SOURCE_TITLE_CHARS)
    license: str | None = Field(default=None, max_length=MAX_SOURCE_LICENSE_CHARS)


class AutoPrune(Strict):
    keep_unnamed: JsonInt | None = Field(default=None, ge=0, le=MAX_KEEP_UNNAMED)
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
        description="The embedder every version of this model is trained with, chosen once: "
        f"{', '.join(MODEL_CHOICES)} (a name or its id). Default: the service's embedder.",
        examples=[DEFAULT_EMBEDDER],
    )

    @field_validator("handle")
    @classmethod
    def _handle(cls, value: str) -> str:
        if not HANDLE_RE.match(value):
            raise ValueError("handle must be '<namespace>.<name>', lowercase letters, digits, '_' and '-'")
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


class ModelPage(BaseModel):
    items: list[ModelOut]
    limit: int
    next_cursor: str | None


class Deleted(BaseModel):
    handle: str
    deleted: bool


# ---- traits ---------------------------------------------------------------------------------------


class TraitIn(Strict):
    name: str = Field(min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=_NOT_BLANK)
    positive_label: Label
    negative_label: Label
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    aggregation: Aggregation = "mean"

    @field_validator("name", "positive_label", "negative_label")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class TraitsIn(Strict):
    traits: list[TraitIn] = Field(min_length=1, max_length=MAX_TRAITS)


class TraitPatch(Strict):
    name: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=_NOT_BLANK
    )
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    positive_label: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=_NOT_BLANK
    )
    negative_label: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=_NOT_BLANK
    )
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
    kind: TraitKind
    aggregation: Aggregation
    discrimination: float
    explained_variance: float
    anchor_sample_ids: AnchorIds | JsonObject
    #: How the active version trained this trait: from its pole labels alone (`zero_shot`), from samples
    #: pulled toward its labels (`prior`) or from samples alone (`samples`); null when not trained.
    method: Literal["zero_shot", "prior", "samples"] | None = None


class TraitsOut(BaseModel):
    traits: list[TraitOut]


# ---- samples --------------------------------------------------------------------------------------


def check_annotator(value: str) -> str:
    if not ANNOTATOR_RE.match(value):
        raise PydanticCustomError(
            "invalid_annotator",
            f"an annotator is 1-{MAX_ANNOTATOR_CHARS} ASCII letters, digits, '.', '_', '@' and '-', "
            "starting with a letter or digit",
        )
    return value


# Checked by check_annotator as a whole string (a Field pattern would let a trailing newline through).
Annotator = Annotated[
    str,
    Field(max_length=MAX_ANNOTATOR_CHARS, json_schema_extra={"pattern": ANNOTATOR_PATTERN, "minLength": 1}),
    AfterValidator(check_annotator),
]
_ANNOTATOR_HELP = (
    "Who gave the label (an external rater's id, for an import of several raters' votes); absent: the "
    "calling key's annotator name. Another key's name → 422 `annotator_reserved`."
)


class LabelIn(Strict):
    """A labelled text: a sample, or an evaluation-set item."""

    trait: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    text: Text
    quality: float = Field(ge=0.0, le=1.0)
    source_url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    annotator: Annotator | None = Field(default=None, description=_ANNOTATOR_HELP)

    @field_validator("quality")
    @classmethod
    def _quality(cls, value: float) -> float:
        if math.isnan(value):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1]")
        return value


class SampleIn(LabelIn):
    adjudicated: bool = Field(
        default=False,
        description="A reviewer's vote that settles the text: its quality decides the text's pole in "
        "training (the other votes stay stored). A sample edit: untrained models only.",
    )


class SamplesIn(Strict):
    samples: list[SampleIn] = Field(min_length=1, max_length=MAX_SAMPLES_PER_REQUEST)


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
    annotator: str | None = Field(
        description="Who gave the label; null for machine-made samples and those stored before annotators"
    )
    adjudicated: bool = Field(description="A reviewer's vote that settles the text")


class SamplePage(BaseModel):
    items: list[SampleOut]
    limit: int
    next_cursor: str | None


class SamplePatch(Strict):
    """A sample's edit: each field optional; null (or absent) leaves it unchanged. Same rules as input."""

    trait: str | None = Field(default=None, min_length=1, max_length=MAX_LABEL_CHARS)
    text: Text | None = None
    quality: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("quality")
    @classmethod
    def _quality(cls, value: float | None) -> float | None:
        if value is not None and math.isnan(value):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1]")
        return value


class SampleDeleted(BaseModel):
    handle: str
    id: int
    deleted: bool


# ---- runs -----------------------------------------------------------------------------------------


class TrainIn(Strict):
    effort: TrainEffort | None = None
    reoptimize_params: bool = False


class DiscoverIn(Strict):
    effort: DiscoverEffort | None = None


class SynthesizeIn(Strict):
    synth_type: SynthType = Field(default="from_traits", description="`enrich` is not supported (422).")
    effort: DiscoverEffort | None = None


class RunStarted(BaseModel):
    state: ModelState
    run_id: str | None


# ---- versions -------------------------------------------------------------------------------------


class VersionOut(BaseModel):
    version_id: int
    version_no: int
    triggered_by: VersionTrigger
    param_hash: str
    sample_count: int
    created_at: datetime
    run_id: str | None
    metrics: JsonObject
    tags: list[str]
    snapshot: JsonObject | None = Field(default=None, description="Omitted for scoring-scope keys.")


class VersionPage(BaseModel):
    items: list[VersionOut]
    limit: int
    next_cursor: str | None


class TagIn(Strict):
    """Optional body of `POST …/versions/{tag}` (addition): the version to tag; absent, the active one."""

    version: str | None = Field(
        default=None,
        max_length=MAX_VERSION_REF_CHARS,
        description="`vN` or a tag; default: the active version",
    )


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
    trait: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    quality: float = Field(ge=0.0, le=1.0)


# Checked in _content, not per member: a union reports every member's error, and a too-long text in a list
# would first read "Input should be a valid string" (the single-text member's complaint).
ScoreText = Annotated[str, Field(json_schema_extra=_TEXT_SCHEMA)]


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
        "the workbench colours a word from 3 (docs/engine.md, Explanations)"
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


class KeyInfo(BaseModel):
    prefix: str = Field(description="The lookup part of the key (`sk_<prefix>_…`); safe to show")
    scope: KeyScope
    namespaces: list[str] = Field(description="Namespaces the key owns, sorted (`public` is readable by all)")
    created_at: datetime
    name: str = Field(
        description="The annotator name the key's labels carry: its name, or `key-<prefix>` when it has none"
    )


class Health(BaseModel):
    status: str
    version: str


# ---- unlabelled pool ------------------------------------------------------------------------------


PoolTextIn = Text


class PoolIn(Strict):
    texts: list[PoolTextIn] = Field(min_length=1, max_length=MAX_POOL_TEXTS_PER_REQUEST)


class PoolAdded(BaseModel):
    ids: list[int]
    added: int = Field(description="How many of the texts were new to the pool.")


class FeedbackLabelOut(BaseModel):
    """A label sent with score feedback, waiting in the buffer for the automatic retraining."""

    id: int
    trait: str
    text: str
    quality: float
    created_at: datetime


class FeedbackPage(BaseModel):
    handle: str
    items: list[FeedbackLabelOut]
    limit: int
    next_cursor: str | None
    buffered: int = Field(description="Labels in the buffer now (the model's `buffered_feedback`).")
    retrain_at: int = Field(
        description="The buffer size at which feedback starts an automatic retraining "
        "(`SCORING_RETRAIN_BUFFER`)."
    )


class FeedbackWithdrawn(BaseModel):
    handle: str
    id: int
    deleted: bool
    buffered: int


class PoolTextOut(BaseModel):
    id: int
    text: str
    created_at: datetime


class PoolPage(BaseModel):
    items: list[PoolTextOut]
    limit: int
    next_cursor: str | None
    total: int


class PoolDeleted(BaseModel):
    handle: str
    deleted: int


class SuggestIn(Strict):
    trait: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    k: JsonInt = Field(default=SUGGESTIONS.default, ge=1, le=SUGGESTIONS.maximum)
    mode: SuggestMode = "auto"
    overlap: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_OVERLAP,
        description="The share of the k picks (rounded) taken from pool texts another annotator labelled "
        "for this trait and the caller has not, so that agreement is measured as the team works.",
    )

    @field_validator("overlap")
    @classmethod
    def _overlap(cls, value: float) -> float:
        if math.isnan(value):
            raise PydanticCustomError("invalid_overlap", "overlap must be a number in [0, 0.5]")
        return value


class Suggestion(BaseModel):
    id: int
    text: str
    score: float | None = Field(
        description="The current draft fit's score; null before both poles have labels."
    )
    overlap: bool = Field(
        default=False, description="A text another annotator labelled (asked for with `overlap`)."
    )


class SuggestOut(BaseModel):
    trait: str
    mode: SuggestMode
    items: list[Suggestion]
    pool_size: int
    labelled: int
    unlabelled: int = Field(description="Pool texts not labelled for the trait yet (addition).")


# -- evaluation sets -------------------------------------------------------------------------------------


class EvalItemsIn(Strict):
    items: list[LabelIn] = Field(min_length=1, max_length=MAX_EVAL_ITEMS_PER_REQUEST)


class EvalAdded(BaseModel):
    added: int
    total: int


class EvalTraitCounts(BaseModel):
    positive: int
    negative: int


class EvalSetOut(BaseModel):
    handle: str
    total: int
    traits: dict[str, EvalTraitCounts]


class EvalDeleted(BaseModel):
    handle: str
    deleted: int


class EvaluationStarted(BaseModel):
    state: str
    run_id: str
    version_no: int


class EvaluationOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    created_at: datetime
    items: int
    traits: JsonObject


# -- thresholds ----------------------------------------------------------------------------------------------


class PrPoint(BaseModel):
    threshold: float
    precision: float
    recall: float


class PrTrait(BaseModel):
    positive: int
    negative: int
    points: list[PrPoint]


class PrCurveOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    traits: dict[str, PrTrait]


class ThresholdIn(Strict):
    target: Literal["precision", "recall"]
    value: float = Field(gt=0.0, le=1.0)


class ThresholdOut(BaseModel):
    trait: str
    threshold: float
    target: str
    value: float
    precision: float
    recall: float
    run_id: str
    items: int
    set_at: str = Field(json_schema_extra={"format": "date-time"})  # ISO 8601, as every other time


class ThresholdsOut(BaseModel):
    handle: str
    version_no: int
    thresholds: dict[str, ThresholdOut]


class ThresholdDeleted(BaseModel):
    handle: str
    version_no: int
    trait: str
    deleted: bool


# -- eval_compare --------------------------------------------------------------------------------------------


class ComparedRun(BaseModel):
    version_no: int
    run_id: str


class Disagreement(BaseModel):
    item_id: int
    trait: str
    text: str
    quality: float
    score_a: float
    score_b: float
    difference: float


class EvalCompareOut(BaseModel):
    handle: str
    a: ComparedRun
    b: ComparedRun
    items: int
    traits: dict[str, JsonObject]
    disagreements: list[Disagreement]


# -- history -------------------------------------------------------------------------------------------------


EventKind = Literal["activated", "tagged", "untagged", "reopened"]


class HistoryEvent(BaseModel):
    at: datetime
    kind: EventKind
    version_no: int
    tag: str | None = None
    previous_version_no: int | None = None


class HistoryOut(BaseModel):
    handle: str
    events: list[HistoryEvent]


# -- preview -------------------------------------------------------------------------------------------------


class TraitPreviewIn(Strict):
    trait: TraitIn
    texts: list[Text] = Field(
        min_length=1, max_length=MAX_PREVIEW_TEXTS, description=f"1-{MAX_PREVIEW_TEXTS} probe texts."
    )


class TraitPreviewOut(BaseModel):
    scores: list[float] = Field(description="The zero-shot score of each probe text, in order.")
    positive_texts: list[str] = Field(description="The pole texts the positive end of the axis comes from.")
    negative_texts: list[str]
    embedder: str


# -- annotators' agreement -----------------------------------------------------------------------------------


class AnnotatorVotes(BaseModel):
    annotator: str
    votes: int = Field(description="Counted votes of the annotator on the trait (adjudications aside)")


class PairAgreement(BaseModel):
    a: str
    b: str
    texts: int = Field(description="Texts both annotators voted on")
    same_pole: int = Field(description="Of those, the texts where their votes fall on the same pole")
    agreement: float = Field(description="same_pole / texts")


class VoteOut(BaseModel):
    annotator: str | None
    quality: float
    sample_id: int | None = Field(
        description="The sample holding the vote; null for a buffered feedback label"
    )
    adjudicated: bool = False


class DisagreedText(BaseModel):
    text: str
    votes: list[VoteOut]
    quality: float = Field(description="The counted quality (the adjudicated vote's, else the votes' mean)")
    contested: bool = Field(description="Votes on both poles and not adjudicated")
    adjudicated: bool


class TraitAgreementOut(BaseModel):
    texts_with_votes: int = Field(description="Texts with at least 2 counted votes of annotators")
    annotators: list[AnnotatorVotes]
    krippendorff_alpha_interval: float | None
    krippendorff_alpha_nominal: float | None
    pairwise: list[PairAgreement]
    disagreed: list[DisagreedText]


class AgreementOut(BaseModel):
    handle: str
    traits: dict[str, TraitAgreementOut]
    stored_at: datetime | None = Field(
        default=None,
        description="Zero-data-retention: when the numbers were kept, just before the votes were purged "
        "(`disagreed` is then empty); null when computed from the stored votes now.",
    )
