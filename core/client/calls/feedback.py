"""Buffered score feedback: list and withdraw."""

from __future__ import annotations

from collections.abc import Iterator

from core.client.calls.base import ClientBase
from core.client.models import (
    FeedbackLabel,
    FeedbackPage,
    FeedbackWithdrawn,
)
from core.client.paths import path as _path


class FeedbackCalls(ClientBase):
    def feedback_page(self, handle: str, limit: int | None = None, cursor: str | None = None) -> FeedbackPage:
        """A page of the model's buffered feedback labels (oldest first), with `buffered` (the buffer's size)
        and `retrain_at` (the size at which the service retrains the model). Owner's authoring key only."""
        body = self._get(_path("models", handle, "feedback"), {"limit": limit, "cursor": cursor})
        return FeedbackPage.model_validate(body)

    def list_feedback(self, handle: str, page_size: int | None = None) -> Iterator[FeedbackLabel]:
        return self._paginate(lambda cursor: self.feedback_page(handle, limit=page_size, cursor=cursor))

    def withdraw_feedback(self, handle: str, label_id: int) -> FeedbackWithdrawn:
        """Take a buffered feedback label back before the automatic retraining uses it (409 `model_busy`
        while a retraining runs: it has read the buffer)."""
        response = self.request("DELETE", _path("models", handle, "feedback", label_id))
        return FeedbackWithdrawn.model_validate(response.json())
