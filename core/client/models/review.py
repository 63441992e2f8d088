"""The review queue: labels as proposals, accepted or rejected (docs/api.md "Review")."""

from __future__ import annotations

from datetime import datetime

from core.client.models.base import Page, _Response


class ReviewItem(_Response):
    """A label and where it stands: `status` accepted, pending or rejected, by whom and why."""

    kind: str  # "sample" (a vote) or "feedback" (a buffered feedback label)
    id: int
    trait: str
    text: str
    quality: float
    annotator: str | None = None
    status: str = "accepted"
    reviewed_by: str | None = None
    comment: str | None = None
    created_at: datetime | None = None
    original_quality: float | None = None  # the annotator's quality when a reviewer corrected it; else None
    corrected_by: str | None = None  # the reviewer who corrected it last


class PersonReview(_Response):
    """One person's labels decided and pending, and the share accepted (None: none decided)."""

    annotator: str
    accepted: int = 0
    rejected: int = 0
    pending: int = 0
    acceptance_rate: float | None = None


class ReviewPage(Page[ReviewItem]):
    """`GET …/review`: a page of one status's labels, and each person's figures."""

    handle: str | None = None
    review: bool = False
    people: list[PersonReview] = []


class Reviewed(_Response):
    """`POST …/review`: the labels decided."""

    handle: str
    decision: str
    reviewed: int
    items: list[ReviewItem] = []


class LabelsRemoved(_Response):
    """`DELETE …/labels`: one person's labels removed (`samples`, `feedback`, `unsure`), and the token that
    undoes it within the hour (None: nothing removed, or zero-data-retention)."""

    handle: str
    annotator: str
    removed: dict[str, int] = {}
    undo: str | None = None


class LabelsRestored(_Response):
    handle: str
    annotator: str
    restored: dict[str, int] = {}
