"""The pool of unlabelled texts: pages, suggestions to label, claims, labels and bulk imports."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from core.client.models.base import Page, _counted, _Response
from core.json_types import JsonObject


class PoolText(_Response):
    id: int
    text: str
    created_at: datetime | None = None
    metadata: JsonObject | None = None  # the extra columns kept beside the text


class PoolPage(Page[PoolText]):
    total: int = 0
    in_evaluation_set: int = 0  # the pool's texts left out as the evaluation set's (never labelled)


class Suggestion(_Response):
    id: int
    text: str
    score: float | None = None  # the current draft fit's score (None before both poles have labels)
    overlap: bool = False  # a text another annotator labelled (asked for with `overlap`)
    claimed_until: datetime | None = None  # asked with `claim`: when the caller's claim on it ends
    metadata: JsonObject | None = None  # the extra columns kept beside the text


class Suggestions(_Response):
    trait: str
    mode: str
    items: list[Suggestion] = Field(default_factory=list)
    pool_size: int = 0
    labelled: int = 0
    unlabelled: int | None = None  # pool texts not labelled for the trait yet (None from an older service)
    held_by_others: int = 0  # of those, the texts colleagues' live claims hold now


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
    point: int | None = None  # the point of the trait's scale given; None for a pole trait
    stored_as: str
    buffered: bool = False
    id: int
    version_no: int | None = None  # the version the label will be trained into
    state: str | None = None  # the model's state when it was stored
    votes: int = 1
    votes_wanted: int = 1
    buffered_feedback: int = 0
    retraining: bool = False  # it filled the buffer: an automatic retraining started


class BulkLabelled(_Response):
    """`POST …/pool/label`: one label given to a selection; `skipped` texts were no longer in the pool or had
    the votes they want from colleagues."""

    handle: str
    trait: str
    quality: float
    labelled: list[int] = Field(default_factory=list)
    skipped: list[int] = Field(default_factory=list)
    stored_as: str
    buffered_feedback: int = 0
    retraining: bool = False


class PoolImportReport(_Response):
    """How far a pool import got. `stored` texts (from the start of the input) are in the pool; an import that
    stopped (`error`) resumes with `start=stored`, and texts already there are never added twice."""

    total: int = 0
    stored: int = 0  # input texts acknowledged by the service, counted from index 0
    added: int = 0  # of those sent by this call, texts that were new to the pool
    ids: list[int] = Field(default_factory=list)  # pool ids of the texts this call stored, in input order
    in_evaluation_set: int = 0  # of those sent, texts left out (no id) as texts of the evaluation set
    labelled: int = 0  # of those added, texts of the model's samples (labelled already)
    # Indexes (in the whole input) of texts that added nothing: in the pool before, or earlier in the input.
    duplicates: list[int] = Field(default_factory=list)
    batches: int = 0
    error: str | None = None  # why the import stopped early (after retrying smaller batches)

    def __repr__(self) -> str:
        return _counted(self)

    def __str__(self) -> str:  # `print(report)`: the counts and why it stopped, never every id
        return _counted(self) + (f"\n  {self.error}" if self.error else "")

    @property
    def complete(self) -> bool:
        return self.error is None and self.stored >= self.total
