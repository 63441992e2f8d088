"""The review queue: labels as proposals, accepted or rejected (`routes/review.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from core.contract import (
    MAX_REVIEW_COMMENT_CHARS,
    MAX_REVIEW_ITEMS,
    MAX_UNDO_TOKEN_CHARS,
    ReviewDecision,
    ReviewStatus,
)
from service.schemas.common import JsonInt, Strict
from service.schemas.my_labels import MyLabelPatch

LabelKind = Literal["sample", "feedback"]


class ReviewItem(BaseModel):
    kind: LabelKind = Field(description="`sample` (a vote) or `feedback` (a buffered feedback label).")
    id: int
    trait: str
    text: str
    quality: float
    annotator: str | None
    status: ReviewStatus
    reviewed_by: str | None = Field(
        description="The reviewer who decided, `agreement` for the owner's rule; null: not decided."
    )
    comment: str | None = Field(description="The reviewer's comment (a rejection's reason).")
    created_at: datetime
    original_quality: float | None = Field(
        default=None,
        description="The quality its annotator gave, when a reviewer corrected it (`quality` is then the "
        "corrected one, what training reads); null: never corrected (addition).",
    )
    corrected_by: str | None = Field(
        default=None, description="The reviewer who corrected it last; null: never corrected (addition)."
    )


class PersonReview(BaseModel):
    annotator: str
    accepted: int = Field(description="Their labels a reviewer or the agreement rule accepted.")
    rejected: int
    pending: int
    acceptance_rate: float | None = Field(description="accepted / (accepted + rejected); null: none decided.")


class ReviewPage(BaseModel):
    handle: str
    review: bool = Field(description="Whether the model's annotators' labels wait for a reviewer.")
    items: list[ReviewItem]
    limit: int
    next_cursor: str | None
    people: list[PersonReview] = Field(
        description="Per person, their decided and pending labels (an annotator: their own line only)."
    )


class ReviewRef(Strict):
    kind: LabelKind
    id: JsonInt = Field(ge=1)


class ReviewIn(Strict):
    decision: ReviewDecision
    items: list[ReviewRef] = Field(min_length=1, max_length=MAX_REVIEW_ITEMS)
    comment: str | None = Field(default=None, max_length=MAX_REVIEW_COMMENT_CHARS)


class CorrectIn(MyLabelPatch):
    """A reviewer's corrected quality (or point of the trait's scale) for one label (addition)."""

    comment: str | None = Field(
        default=None, max_length=MAX_REVIEW_COMMENT_CHARS, description="Why, for the label's author."
    )


class Reviewed(BaseModel):
    handle: str
    decision: ReviewDecision
    reviewed: int = Field(description="Labels decided by this request.")
    items: list[ReviewItem]


class LabelsRemoved(BaseModel):
    handle: str
    annotator: str
    removed: dict[str, int] = Field(description="Rows removed: `samples` (votes), `feedback`, `unsure`.")
    undo: str | None = Field(
        description="The token that undoes the removal for an hour (`POST …/labels/restore`); null when "
        "nothing was removed, or under zero-data-retention (no text is kept aside)."
    )


class RestoreIn(Strict):
    undo: str = Field(min_length=1, max_length=MAX_UNDO_TOKEN_CHARS)


class LabelsRestored(BaseModel):
    handle: str
    annotator: str
    restored: dict[str, int]
