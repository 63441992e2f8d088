"""Versions and their tags (`routes/versions.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.contract import MAX_VERSION_REF_CHARS, VersionTrigger
from core.json_types import JsonObject
from service.schemas.common import Strict


class EmbedderName(BaseModel):
    embedder: str = Field(description="The embedder's id, as snapshots record it.")
    name: str = Field(description="Its short name (`mpnet-base`, `e5-small-qint8`); the id when it has none.")


class EmbedderCandidate(EmbedderName):
    roc_auc: float | None = Field(description="The out-of-fold ROC-AUC training reported on this embedder.")
    roc_auc_se: float | None = Field(
        default=None, description="Its standard error (addition): about 0.1 at 8 labels a pole."
    )


class VersionEmbedder(EmbedderName):
    """The embedder a version was trained on (addition), and the embedders training compared."""

    candidates: list[EmbedderCandidate] | None = Field(
        default=None,
        description="Every embedder training compared, cheapest first, the kept one included (where none "
        "was, the version's own figures: the kept one's, or a blend's then each embedder's alone); "
        "null when it trained on the model's one embedder.",
    )
    left_out_for_language: list[EmbedderName] = Field(
        default_factory=list,
        description="Embedders not tried: most samples are not in a language they read.",
    )
    not_compared: list[EmbedderName] = Field(
        default_factory=list,
        description="Embedders on offer that training did not compare (`not_compared_because` says why): the "
        "cheapest was kept without embedding anything with them.",
    )
    not_compared_because: str | None = Field(
        default=None,
        description="Why embedders were not compared, in words: short texts (a median under 8 words) or few "
        "labels (under 32 on a trait's smaller pole), where the comparison does not foretell the test.",
    )
    compared_on: int | None = Field(
        default=None,
        description="How many samples the candidates' out-of-fold figures were measured on (at most 400 "
        "when embedders were compared: the kept one then trained on every sample); null when none was.",
    )
    tie: float | None = Field(
        default=None,
        description="(addition) The out-of-fold lead a larger embedder needed over a cheaper one to be "
        "kept, when embedders were compared; null when none was.",
    )
    roc_auc: float | None = Field(
        default=None,
        description="(addition) The version's out-of-fold ROC-AUC, the mean over its traits that have one.",
    )
    roc_auc_se: float | None = Field(
        default=None,
        description="(addition) Its standard error: over 0.05 (8 labels a pole give about 0.1) the figure "
        "rests on too few labels to read closely, and the version's words say so.",
    )


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
    embedder: VersionEmbedder | None = Field(
        default=None, description="(addition) Null only for a version whose metrics name no embedder."
    )
    body: VersionEmbedder | None = Field(
        default=None, description="(addition) `embedder` under its first name, for clients that read it."
    )
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
