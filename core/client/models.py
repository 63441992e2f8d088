"""Typed request and response models.

Responses accept unknown fields (`extra="allow"`) and type loosely what the spec leaves
open, so a newer or remote service never breaks parsing. Request inputs are strict
(`extra="forbid"`, ranges checked) so a typo fails here, with the row it came from,
instead of as a 422 for a whole batch.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from core.contract import (
    AGGREGATIONS,
    ANNOTATOR_RE,
    DEFAULT_ROLE,
    MAX_LABEL_CHARS,
    MAX_SOURCE_ID_CHARS,
    MAX_TEXT_CHARS,
    Action,
    InputProvenance,
    role_allows,
    source_id_text,
    text_too_long_message,
)
from core.json_types import JsonObject


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: object) -> object:
        # A null where we have a non-null default (e.g. "scores": null next to "results") means "absent".
        if isinstance(data, dict):
            nulls = [
                name
                for name, field in cls.model_fields.items()
                if data.get(name, 0) is None
                and not field.is_required()
                and field.get_default(call_default_factory=True) is not None
            ]
            if nulls:
                data = {k: v for k, v in data.items() if k not in nulls}
        return data


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


# -- inputs -----------------------------------------------------------------------------------------


class TraitInput(_Input):
    name: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    positive_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    negative_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    description: str = ""
    aggregation: str = "mean"

    @field_validator("aggregation")
    @classmethod
    def _known_aggregation(cls, v: str) -> str:
        if v not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}")
        return v


class SampleInput(_Input):
    trait: Annotated[str, Field(min_length=1)]
    text: str
    quality: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
    source_url: str | None = None
    #: Who gave the label (an external rater); None: the key's own annotator name.
    annotator: str | None = None
    #: A reviewer's vote that settles the text (decides its pole; the other votes stay).
    adjudicated: bool = False
    #: The id of the sample's row in the file it came from (a number becomes its text: 17.0 is "17").
    source_id: Annotated[str | None, Field(max_length=MAX_SOURCE_ID_CHARS)] = None
    #: `imported`: a row of a file, not the sender's vote (the file's rater's, or nobody's); None: `authored`.
    provenance: InputProvenance | None = None

    @field_validator("source_id", mode="before")
    @classmethod
    def _id_as_text(cls, v: object) -> object:
        return v if isinstance(v, str) and v.strip() else source_id_text(v)

    @field_validator("annotator", mode="before")
    @classmethod
    def _annotator_rule(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
            return None
        if isinstance(v, float) and v.is_integer():
            v = int(v)  # a CSV's rater-id column with gaps reads as floats: 17.0 is rater 17
        v = str(v) if isinstance(v, int) and not isinstance(v, bool) else v
        if isinstance(v, str) and not ANNOTATOR_RE.match(v.strip()):
            raise PydanticCustomError(
                "invalid_annotator",
                "annotator must be 1-64 ASCII letters, digits, '.', '_', '@' and '-', starting with a letter "
                "or digit",
            )
        return v

    @field_validator("trait", mode="before")
    @classmethod
    def _trait_given(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
            raise PydanticCustomError("missing", "trait is missing: give one of the model's trait keys")
        return v

    @field_validator("text", mode="before")
    @classmethod
    def _missing_text_is_empty(cls, v: object) -> object:
        # An empty grid cell or CSV field arrives as None or NaN: it is an empty text, not a type error.
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v

    @field_validator("text")
    @classmethod
    def _text_rule(cls, v: str) -> str:
        # The service's rule and words (codes empty_text / text_too_long), checked on the trimmed text.
        if not v:
            raise PydanticCustomError("empty_text", "text is empty")
        if len(v) > MAX_TEXT_CHARS:
            raise PydanticCustomError("text_too_long", text_too_long_message(len(v)))
        return v

    @field_validator("quality", mode="before")
    @classmethod
    def _no_bool_or_nan(cls, v: object) -> object:
        # bool is an int subclass and pandas turns empty cells into NaN: both are data mistakes
        if isinstance(v, bool):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1], not a boolean")
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise PydanticCustomError("missing", "quality is missing: give a number in [0, 1]")
        return v

    @field_validator("source_url", mode="before")
    @classmethod
    def _blank_url_is_none(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, str) and not v.strip():
            return None
        return v


# -- responses --------------------------------------------------------------------------------------


class LastOperation(_Response):
    kind: str | None = None
    status: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    run_id: str | None = None
    progress: Any = None  # Any: {"fraction", "phase", "message"} here; open in the spec
    error: Any = None  # Any: {"code", "message"} or null; open in the spec
    queue_position: Any = None  # Any: a queued run's place in line (1 = next); absent from older services

    @property
    def place_in_queue(self) -> int | None:
        """The run's place in line while it is queued (1 = next to start), if the service reports one."""
        value = self.queue_position
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    def _progress_field(self, name: str) -> object:
        return self.progress.get(name) if isinstance(self.progress, dict) else None

    @property
    def fraction(self) -> float | None:
        """Progress in [0, 1] if the service reports one."""
        value = self.progress if isinstance(self.progress, int | float) else self._progress_field("fraction")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return min(1.0, max(0.0, float(value)))
        return None

    @property
    def phase(self) -> str | None:
        value = self._progress_field("phase")
        return str(value) if value is not None else None

    @property
    def progress_message(self) -> str | None:
        value = self._progress_field("message")
        return str(value) if value is not None else None

    @property
    def error_code(self) -> str | None:
        if isinstance(self.error, dict):
            return str(self.error.get("code")) if self.error.get("code") is not None else None
        return None

    @property
    def error_message(self) -> str | None:
        if isinstance(self.error, dict):
            msg = self.error.get("message")
            return str(msg) if msg is not None else None
        return str(self.error) if self.error is not None else None

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed")


class Model(_Response):
    handle: str
    scoring_method: str = "balanced_cosine"
    description: str | None = ""
    state: str = "draft"
    kind: str = "scoring"
    traits: list[Any] = Field(default_factory=list)  # Any: open in the spec
    current_version_id: int | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    zero_data_retention: bool = False
    last_operation: LastOperation | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    max_depth: int | None = None
    additional_terms: str | None = None
    upstream_sources: list[JsonObject] | None = None
    readme_markdown: str | None = None
    auto_prune: JsonObject | None = None
    sample_count: int | None = None
    buffered_feedback: int | None = None
    embedder: str | None = None
    #: People who label each pool text (1 from an older service: every text once).
    votes_wanted: int = 1
    #: False: the owner paused automatic retraining (buffered feedback waits); True from an older service.
    auto_retrain: bool = True

    @property
    def namespace(self) -> str:
        return self.handle.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.handle.split(".", 1)[1] if "." in self.handle else self.handle

    @property
    def is_busy(self) -> bool:
        return self.state == "busy"


class Trait(_Response):
    key: str
    name: str
    positive_label: str
    negative_label: str
    description: str | None = ""
    kind: str = "extrinsic"
    aggregation: str | None = None
    sample_count: int = 0
    positive_samples: int = 0
    negative_samples: int = 0
    neutral_samples: int = 0  # quality exactly 0.5: on neither pole (0 from older services)
    discrimination: float = 0.0
    explained_variance: float = 0.0
    anchor_sample_ids: JsonObject = Field(default_factory=dict)
    #: How the active version trained it: "zero_shot", "prior" or "samples"; None before the first train.
    method: str | None = None


class Sample(_Response):
    id: int
    trait: str
    text: str
    quality: float
    provenance: str = "authored"
    source_url: str | None = None
    content_sha256: str | None = None
    created_at: datetime | None = None
    annotator: str | None = None  # who gave it; None: machine-made, or stored before annotators
    adjudicated: bool = False
    source_id: str | None = None  # the id of its row in the file it came from; None: none given


class Version(_Response):
    version_id: int
    version_no: int
    triggered_by: str = "train"
    param_hash: str = ""
    sample_count: int = 0
    created_at: datetime | None = None
    run_id: str | None = None
    metrics: JsonObject = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    snapshot: JsonObject | None = None  # absent for scoring-scope keys

    @property
    def label(self) -> str:
        return f"v{self.version_no}"

    @property
    def trait_metrics(self) -> dict[str, JsonObject]:
        """Per-trait metrics (`metrics["traits"]`), `{}` when the service reports none."""
        traits = self.metrics.get("traits")
        return traits if isinstance(traits, dict) else {}


T = TypeVar("T")


class Page(_Response, Generic[T]):
    items: list[T] = Field(default_factory=list)
    limit: int | None = None
    next_cursor: str | None = None


class RunRef(_Response):
    """Answer of train, discover and synthesize: the state after the call and the run to wait for."""

    state: str
    run_id: str | None = None
    status_code: int = 202


class KeyInfo(_Response):
    """`GET /keys/current`: the calling key's scope and owned namespaces (never its secret)."""

    prefix: str
    scope: str
    namespaces: list[str] = Field(default_factory=list)
    created_at: datetime | None = None
    #: The annotator name the key's labels carry (its name, or `key-<prefix>`); None from older services.
    name: str | None = None
    #: `annotator`, `reviewer` or `owner` (core.contract.ROLES); None from services without roles (owner).
    role: str | None = None
    #: `key`, or `person`: someone signed in with an ID token of the team's identity provider.
    kind: str = "key"
    #: The role in each namespace (a person's may differ per namespace); empty from older services.
    roles: dict[str, str] = Field(default_factory=dict)
    #: A person's email (their annotator name) and the name their identity provider gives.
    email: str | None = None
    display_name: str | None = None

    @property
    def can_author(self) -> bool:
        return self.scope == "authoring"

    @property
    def is_person(self) -> bool:
        return self.kind == "person"

    def role_in(self, namespace: str | None = None) -> str | None:
        """The role in `namespace` (None: the key's one role); None where the caller has none."""
        if namespace is not None and self.roles:
            return self.roles.get(namespace)
        return self.role or DEFAULT_ROLE

    def may(self, action: Action, namespace: str | None = None) -> bool:
        """Whether the caller may do `action` (in `namespace`, when given: a person's roles differ per
        namespace; a service without roles: an owner)."""
        role = self.role_in(namespace)
        return self.can_author and role is not None and role_allows(role, action)


class Member(_Response):
    """Someone in a namespace (`GET /namespaces/{ns}/people`): named by email or provider subject."""

    namespace: str
    member: str
    role: str
    email: str | None = None
    display_name: str | None = None
    signed_in: bool = False


class MemberRemoved(_Response):
    namespace: str
    member: str
    role: str
    removed: bool = True


class DeleteResult(_Response):
    handle: str
    deleted: bool
    id: int | None = None  # the sample's id, for a sample delete


class PoolText(_Response):
    id: int
    text: str
    created_at: datetime | None = None


class PoolPage(Page[PoolText]):
    total: int = 0


class FeedbackLabel(_Response):
    """A label sent with score feedback, waiting in the model's buffer for the automatic retraining."""

    id: int
    trait: str
    text: str
    quality: float
    created_at: datetime | None = None
    #: Who sent it; None from an older service or for a label from before annotators.
    annotator: str | None = None


class FeedbackPage(Page[FeedbackLabel]):
    """`GET …/feedback`: a page of the buffer, its size now and the size at which it retrains the model."""

    handle: str | None = None
    buffered: int = 0
    retrain_at: int | None = None


class AuditEvent(_Response):
    """One event of a namespace's audit log: a settle, a settling vote deleted, a buffered label withdrawn,
    a role given or changed (`kind`), by `actor`, on the model `handle` (None for a role change)."""

    id: int
    at: datetime | None = None
    kind: str
    actor: str
    handle: str | None = None
    #: `trait`, `sample_id`/`feedback_id`, `quality`, the vote's `annotator`; or `key`, `name`, `from`, `to`.
    detail: JsonObject = Field(default_factory=dict)


class AuditPage(Page[AuditEvent]):
    """`GET /namespaces/{ns}/audit`: a page of the log, newest first."""

    namespace: str | None = None


class FeedbackWithdrawn(_Response):
    handle: str
    id: int
    deleted: bool
    buffered: int = 0


class Suggestion(_Response):
    id: int
    text: str
    score: float | None = None  # the current draft fit's score (None before both poles have labels)
    overlap: bool = False  # a text another annotator labelled (asked for with `overlap`)
    claimed_until: datetime | None = None  # asked with `claim`: when the caller's claim on it ends


class Suggestions(_Response):
    trait: str
    mode: str
    items: list[Suggestion] = Field(default_factory=list)
    pool_size: int = 0
    labelled: int = 0
    unlabelled: int | None = None  # pool texts not labelled for the trait yet (None from an older service)


class ClaimReleased(_Response):
    """`DELETE …/pool/{id}/claim`: the caller's claims on the text that were let go (0: none held)."""

    handle: str
    id: int
    trait: str | None = None
    released: int = 0


class PoolLabel(_Response):
    """`POST …/pool/{id}/label`: where the label went. `stored_as` `sample` (an untrained draft took it) or
    `feedback` (buffered for the next version: a trained model, or any model while a run is in flight)."""

    handle: str
    pool_id: int
    trait: str
    quality: float
    stored_as: str
    buffered: bool = False
    id: int
    version_no: int | None = None  # the version the label will be trained into
    state: str | None = None  # the model's state when it was stored
    votes: int = 1
    votes_wanted: int = 1
    buffered_feedback: int = 0
    retraining: bool = False  # it filled the buffer: an automatic retraining started


class TagResult(_Response):
    handle: str
    tag: str
    version_no: int | None = None


class HistoryEvent(_Response):
    """A version became active (`activated`), or a tag was set on one (`tagged`) or removed (`untagged`), or
    the model was reopened for editing while `version_no` kept serving (`reopened`)."""

    at: datetime
    kind: str
    version_no: int
    tag: str | None = None
    previous_version_no: int | None = None


class TagDeleteResult(_Response):
    handle: str
    tag: str
    deleted: bool


class TraitScore(_Response):
    trait: str
    name: str | None = None
    score: float
    label: str | None = None
    positive_label: str | None = None
    negative_label: str | None = None
    # Only when the version has a decision threshold for the trait (docs/api.md, "Thresholds").
    threshold: float | None = None
    decision: bool | None = None


class ScoreResult(_Response):
    handle: str | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    scores: list[TraitScore] = Field(default_factory=list)
    explanation: JsonObject | None = None
    feedback_buffered: int | None = None
    index: int | None = None  # position in the request, for score_many

    def as_dict(self) -> dict[str, float]:
        """`{trait key: score}` in the service's order."""
        return {s.trait: s.score for s in self.scores}

    def labels(self) -> dict[str, tuple[str, str]]:
        """`{trait key: (negative_label, positive_label)}`."""
        return {s.trait: (s.negative_label or "", s.positive_label or "") for s in self.scores}

    def names(self) -> dict[str, str]:
        return {s.trait: s.name or s.trait for s in self.scores}

    def __getitem__(self, trait: str) -> float:
        for s in self.scores:
            if s.trait == trait or s.name == trait:
                return s.score
        raise KeyError(trait)


class CompareSide(_Response):
    scores: list[TraitScore] = Field(default_factory=list)


class TraitDelta(_Response):
    trait: str
    name: str | None = None
    delta: float


class CompareResult(_Response):
    handle: str | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    a: CompareSide
    b: CompareSide
    difference: list[TraitDelta] = Field(default_factory=list)

    def deltas(self) -> dict[str, float]:
        """`{trait key: score(b) - score(a)}`."""
        return {d.trait: d.delta for d in self.difference}

    def results(self) -> tuple[ScoreResult, ScoreResult]:
        """Both sides as `ScoreResult`s (for charts)."""
        common: JsonObject = {
            "handle": self.handle,
            "version_no": self.version_no,
            "version_tags": self.version_tags,
        }
        return ScoreResult(**common, scores=self.a.scores), ScoreResult(**common, scores=self.b.scores)


class TraitPreview(_Response):
    """Zero-shot scores of probe texts for a trait being written (POST …/traits/preview)."""

    scores: list[float] = Field(default_factory=list)
    positive_texts: list[str] = Field(default_factory=list)
    negative_texts: list[str] = Field(default_factory=list)
    embedder: str = ""


class RowError(_Response):
    """One sample row that was not stored, and why."""

    index: int  # position in the input iterable
    row: Any  # Any: the row as the caller gave it
    message: str
    stage: str = "local"  # "local" (failed validation here) or "server" (rejected by the service)


class ImportReport(_Response):
    total: int = 0
    ids: list[int] = Field(default_factory=list)  # one per stored row, in input order
    errors: list[RowError] = Field(default_factory=list)
    batches: int = 0
    # Stored rows whose text is in the model's evaluation set: stored, but no longer held out.
    in_evaluation_set: int = 0

    @property
    def stored(self) -> int:
        return len(self.ids)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def invalid(self) -> list[RowError]:
        return [e for e in self.errors if e.stage == "local"]

    @property
    def rejected(self) -> list[RowError]:
        return [e for e in self.errors if e.stage == "server"]


class PoolImportReport(_Response):
    """How far a pool import got. `stored` texts (from the start of the input) are in the pool; an import that
    stopped (`error`) resumes with `start=stored`, and texts already there are never added twice."""

    total: int = 0
    stored: int = 0  # input texts acknowledged by the service, counted from index 0
    added: int = 0  # of those sent by this call, texts that were new to the pool
    ids: list[int] = Field(default_factory=list)  # pool ids of the texts this call stored, in input order
    in_evaluation_set: int = 0  # of those sent, texts left out (no id) as texts of the evaluation set
    batches: int = 0
    error: str | None = None  # why the import stopped early (after retrying smaller batches)

    @property
    def complete(self) -> bool:
        return self.error is None and self.stored >= self.total
