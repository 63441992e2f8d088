"""Buffered score feedback: list it, withdraw a label (docs/api.md, "Buffered feedback")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import FEEDBACK_PAGE, MAX_CURSOR_CHARS
from service.domain import feedback
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.feedback import FeedbackPage, FeedbackWithdrawn

router = APIRouter(tags=["feedback"])


@router.get("/models/{handle}/feedback", response_model=FeedbackPage, responses=errors(400, 403, 404))
def list_feedback(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=FEEDBACK_PAGE.maximum)] = FEEDBACK_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> FeedbackPage:
    return feedback.list_feedback(ctx, who, handle, limit, cursor)


@router.delete(
    "/models/{handle}/feedback/{label_id:int}",
    response_model=FeedbackWithdrawn,
    responses=errors(403, 404, 409),
)
def withdraw_feedback(handle: str, label_id: int, who: AuthoringKey, ctx: CtxDep) -> FeedbackWithdrawn:
    return feedback.withdraw_feedback(ctx, who, handle, label_id)
