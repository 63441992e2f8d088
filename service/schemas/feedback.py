"""Buffered score feedback (`routes/feedback.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class FeedbackLabelOut(BaseModel):
    """A label sent with score feedback, waiting in the buffer for the automatic retraining."""

    id: int
    trait: str
    text: str
    quality: float
    created_at: datetime
    annotator: str | None = Field(
        default=None,
        description="Who sent the label (null: from before annotators). Withdrawing one's own is labelling; "
        "a colleague's needs the reviewer role.",
    )


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
