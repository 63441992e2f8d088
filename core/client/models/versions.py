"""A model's versions, their tags and its history of activations."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, model_validator

from core.client.models.base import _Response
from core.embedder_words import embedder_words
from core.json_types import JsonObject


class EmbedderName(_Response):
    embedder: str
    name: str = ""  # the registry's short name; the id when a service sends none

    @property
    def shown(self) -> str:
        return self.name or self.embedder


class EmbedderCandidate(EmbedderName):
    roc_auc: float | None = None
    roc_auc_se: float | None = None  # absent from services before it


class VersionEmbedder(EmbedderName):
    """The embedder a version was trained on, and each embedder training compared (None: it trained on
    the model's one embedder). The fields after `candidates` are absent from services before them: their
    defaults say nothing was left out."""

    candidates: list[EmbedderCandidate] | None = None
    left_out_for_language: list[EmbedderName] = Field(default_factory=list)
    #: Embedders offered but not compared (short texts, few labels): `not_compared_because` says why.
    not_compared: list[EmbedderName] = Field(default_factory=list)
    not_compared_because: str | None = None
    compared_on: int | None = None  # how many samples the candidates' figures were measured on
    tie: float | None = None  # the lead a larger embedder needed to be kept, where embedders were compared
    roc_auc: float | None = None  # the version's out-of-fold figure (mean over its traits) and its s.e.
    roc_auc_se: float | None = None

    @property
    def words(self) -> str:
        """E.g. "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8", "trained on both
        embedders (e5-small-qint8 and mpnet-base, the mean of their scores): out-of-fold 0.93; alone 0.90 on
        e5-small-qint8, 0.91 on mpnet-base", or "trained on e5-small-qint8 (blend not compared: short texts:
        a median of 2 words, under 3)"; with a note when the figure rests on few labels."""
        figures = None if self.candidates is None else {c.shown: c.roc_auc for c in self.candidates}
        if figures is None and self.roc_auc is not None:
            figures = {self.shown: self.roc_auc}
        mine = next((c for c in self.candidates or [] if c.embedder == self.embedder), None)
        se = mine.roc_auc_se if mine is not None and mine.roc_auc_se is not None else self.roc_auc_se
        return embedder_words(
            self.shown,
            figures,
            [b.shown for b in self.left_out_for_language],
            not_compared=[b.shown for b in self.not_compared],
            because=self.not_compared_because,
            compared_on=self.compared_on,
            tie=self.tie,
            se=se,
        )


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
    #: Absent from services before the field (see `embedder_words`); those from before its name send `body`.
    embedder: VersionEmbedder | None = None
    body: VersionEmbedder | None = None  # `embedder` under its first name
    snapshot: JsonObject | None = None  # absent for scoring-scope keys

    @model_validator(mode="after")
    def _embedder_from_body(self) -> Version:
        if self.embedder is None:
            self.embedder = self.body
        return self

    @property
    def label(self) -> str:
        return f"v{self.version_no}"

    @property
    def embedder_id(self) -> str | None:
        """The embedder id the version was trained on; from `metrics.embedder` when the service sends no
        `embedder`; None without either."""
        if self.embedder is not None:
            return self.embedder.embedder
        embedder = self.metrics.get("embedder")
        return embedder if isinstance(embedder, str) and embedder else None

    @property
    def embedder_words(self) -> str:
        """The embedder in words; from `metrics.embedder` (an id) when the service sends no `embedder`; ""
        without either."""
        if self.embedder is not None:
            return self.embedder.words
        embedder = self.metrics.get("embedder")
        return embedder_words(embedder) if isinstance(embedder, str) and embedder else ""

    @property
    def trait_metrics(self) -> dict[str, JsonObject]:
        """Per-trait metrics (`metrics["traits"]`), `{}` when the service reports none."""
        traits = self.metrics.get("traits")
        return traits if isinstance(traits, dict) else {}


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
