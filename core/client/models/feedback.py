"""Score feedback waiting in a model's buffer for the automatic retraining."""

from __future__ import annotations

from datetime import datetime

from core.client.models.base import Page, _Response


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


class FeedbackWithdrawn(_Response):
    handle: str
    id: int
    deleted: bool
    buffered: int = 0
