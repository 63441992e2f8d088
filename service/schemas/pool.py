"""The unlabelled pool and label suggestions (`routes/pool.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from core.contract import (
    MAX_BULK_LABELS,
    MAX_POOL_TEXTS_PER_REQUEST,
    MAX_SCALE_POINTS,
    SUGGESTIONS,
    SuggestMode,
)
from core.json_types import JsonObject
from service.schemas.common import JsonInt, Metadata, Quality, Strict, Text, TraitRef, integral
from service.schemas.models import Overlap

PoolTextIn = Text
#: A pool listing's metadata filter: `key:value`, the key not empty (the first colon splits them).
META_FILTER_PATTERN = "^[^:]+:"


class PoolIn(Strict):
    texts: list[PoolTextIn] = Field(min_length=1, max_length=MAX_POOL_TEXTS_PER_REQUEST)
    metadata: list[Metadata | None] | None = Field(
        default=None,
        description="Per text (as many as `texts`, else 422 `invalid_metadata`), the extra columns kept "
        "beside it (null: none); a text in the pool before keeps the metadata it has (addition).",
    )


class PoolAdded(BaseModel):
    ids: list[int]
    added: int = Field(description="How many of the texts were new to the pool.")
    in_evaluation_set: int = Field(
        0, description="How many of the texts were left out as texts of the evaluation set (they have no id)."
    )
    duplicates: list[int] = Field(
        default_factory=list,
        description="The positions (from 0) of the texts that added nothing: in the pool before, or earlier "
        "in this request (their id is the stored text's).",
    )
    labelled: int = Field(
        0,
        description="How many of the texts new to the pool (`added`) are texts of the model's samples, "
        "labelled already: they are in the pool all the same, never suggested for a trait they are labelled "
        "for (addition).",
    )


class PoolTextOut(BaseModel):
    id: int
    text: str
    created_at: datetime
    metadata: JsonObject | None = Field(
        default=None, description="The extra columns kept beside the text; null: none (addition)."
    )


class PoolPage(BaseModel):
    items: list[PoolTextOut]
    limit: int
    next_cursor: str | None
    total: int
    in_evaluation_set: int = Field(
        default=0,
        description="The pool's texts left out of the list and `total` as texts of the evaluation set "
        "(imported before the set had them; never labelled), whatever the filters (addition).",
    )


class PoolDeleted(BaseModel):
    handle: str
    deleted: int


class SuggestIn(Strict):
    trait: TraitRef
    k: JsonInt = Field(default=SUGGESTIONS.default, ge=1, le=SUGGESTIONS.maximum)
    mode: SuggestMode = "auto"
    overlap: Overlap | None = Field(
        default=None,
        description="The share of the k picks (rounded) taken from pool texts another annotator labelled "
        "for this trait and the caller has not, so that agreement is measured as the team works. Absent: "
        "the model's `overlap`, which its owner sets (addition; 0 unless set).",
    )
    claim: bool = Field(
        default=False,
        description="Claim the texts handed out for the caller for a lease (SCORING_CLAIM_LEASE_S): no one "
        "else is handed them meanwhile (unless the model wants more votes per text); the caller's "
        "still-claimed texts come first.",
    )


class Suggestion(BaseModel):
    id: int
    text: str
    score: float | None = Field(
        description="The current draft fit's score; null before both poles have labels."
    )
    overlap: bool = Field(
        default=False, description="A text another annotator labelled (asked for with `overlap`)."
    )
    claimed_until: datetime | None = Field(
        default=None, description="With `claim`: when the caller's claim on the text ends (addition)."
    )
    metadata: JsonObject | None = Field(
        default=None, description="The extra columns kept beside the text; null: none (addition)."
    )


class SuggestOut(BaseModel):
    trait: str
    mode: SuggestMode
    items: list[Suggestion]
    pool_size: int
    labelled: int
    unlabelled: int = Field(description="Pool texts not labelled for the trait yet (addition).")
    held_by_others: int = Field(
        0,
        description="Of `unlabelled`, the texts colleagues' live claims hold now: handed to nobody else "
        "until they label or release them or the lease ends (addition).",
    )


class ClaimReleased(BaseModel):
    handle: str
    id: int
    trait: str | None
    released: int = Field(description="The caller's claims on the text that were let go (0: none held).")


class LabelIn(Strict):
    # One of the two is required (checked by `_a_label`; the document says so): never null when given.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["quality"]}, {"required": ["point"]}]}
    )

    trait: TraitRef
    quality: Quality | SkipJsonSchema[None] = Field(
        default=None, description="The label of a pole trait: 0 negative … 1 positive."
    )
    # The bounds before the validator, as models.py's VotesWanted: else the document says `ge`/`le`.
    point: (
        Annotated[int, Field(ge=1, le=MAX_SCALE_POINTS), BeforeValidator(integral)] | SkipJsonSchema[None]
    ) = Field(
        default=None,
        description="The label of a trait rated on a scale (addition): its point 1..N, stored as quality "
        "(point-1)/(N-1). Required for such a trait, refused for a pole trait (422).",
    )

    @model_validator(mode="after")
    def _a_label(self) -> LabelIn:
        if self.quality is None and self.point is None:
            raise PydanticCustomError("missing_label", "a label is a quality (pole trait) or a point (scale)")
        return self


class Labelled(BaseModel):
    handle: str
    pool_id: int
    trait: str
    quality: float
    point: int | None = Field(
        default=None, description="The point of the trait's scale given; null for a pole trait (addition)."
    )
    stored_as: Literal["sample", "feedback"] = Field(
        description="`sample`: the untrained (or reopened) draft took it; `feedback`: buffered for the next "
        "version (a trained model, or any model while a run is in flight)."
    )
    buffered: bool = Field(description="The label waits in the feedback buffer (`stored_as` `feedback`).")
    id: int = Field(description="The sample's id, or the buffered feedback label's id.")
    version_no: int = Field(description="The version this label will be trained into (the next one made).")
    state: str = Field(description="The model's state when the label was stored.")
    votes: int = Field(description="The text's votes for the trait now, this one included.")
    votes_wanted: int
    buffered_feedback: int = Field(description="The model's feedback buffer now.")
    retraining: bool = Field(description="This label filled the buffer: an automatic retraining started.")


class BulkLabelIn(LabelIn):
    ids: list[JsonInt] = Field(
        min_length=1, max_length=MAX_BULK_LABELS, description="The pool texts to give this one label."
    )


class BulkLabelled(BaseModel):
    handle: str
    trait: str
    quality: float
    labelled: list[int] = Field(description="The pool texts labelled: a vote of the caller's each.")
    skipped: list[int] = Field(
        description="Texts left unlabelled: not in the pool, or with the votes they want from others."
    )
    stored_as: Literal["sample", "feedback"] = Field(description="Where the labels went, as for one label.")
    buffered_feedback: int = Field(description="The model's feedback buffer now.")
    retraining: bool = Field(description="These labels filled the buffer: an automatic retraining started.")
