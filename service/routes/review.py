"""The review queue: list labels by status, accept or reject them, correct one; remove one person's labels
and undo it (docs/api/review.md, "Review")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import MAX_ANNOTATOR_CHARS, MAX_CURSOR_CHARS, REVIEW_PAGE, ReviewStatus
from service.domain import corrections, removal, review
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.review import (
    CorrectIn,
    LabelsRemoved,
    LabelsRestored,
    RestoreIn,
    Reviewed,
    ReviewIn,
    ReviewItem,
    ReviewPage,
)

router = APIRouter(tags=["review"])


@router.get("/models/{handle}/review", response_model=ReviewPage, responses=errors(400, 403, 404))
def list_review(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    status: ReviewStatus = "pending",
    limit: Annotated[int, Query(ge=1, le=REVIEW_PAGE.maximum)] = REVIEW_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> ReviewPage:
    """The model's labels of one status (default `pending`), with each person's acceptance; an annotator
    reads only their own."""
    return review.list_review(ctx, who, handle, status, limit, cursor)


@router.post("/models/{handle}/review", response_model=Reviewed, responses=errors(403, 404, 409, 422))
def review_labels(handle: str, payload: ReviewIn, who: AuthoringKey, ctx: CtxDep) -> Reviewed:
    """Accept or reject labels (the reviewer role), with an optional comment; all or none."""
    return review.review_labels(ctx, who, handle, payload)


@router.post(
    "/models/{handle}/labels/{label_id}/correct",
    response_model=ReviewItem,
    responses=errors(403, 404, 409, 422),
)
def correct_label(
    handle: str, label_id: int, payload: CorrectIn, who: AuthoringKey, ctx: CtxDep
) -> ReviewItem:
    """Correct a label's quality (the reviewer role): the corrected quality trains, the label keeps its id,
    and the quality its annotator gave stays visible (`original_quality`, the text's history) (addition)."""
    return corrections.correct_label(ctx, who, handle, label_id, payload)


@router.delete("/models/{handle}/labels", response_model=LabelsRemoved, responses=errors(403, 404, 409, 422))
def remove_labels(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    annotator: Annotated[str, Query(min_length=1, max_length=MAX_ANNOTATOR_CHARS)],
) -> LabelsRemoved:
    """Remove every label (votes, buffered feedback labels, unsure marks) of one person on the model, in one
    audited call (the owner's); the answer's `undo` token restores them within the hour."""
    return removal.remove_labels(ctx, who, handle, annotator)


@router.post(
    "/models/{handle}/labels/restore", response_model=LabelsRestored, responses=errors(403, 404, 409)
)
def restore_labels(handle: str, payload: RestoreIn, who: AuthoringKey, ctx: CtxDep) -> LabelsRestored:
    """Undo a bulk removal with its `undo` token (the owner's), within the hour."""
    return removal.restore_labels(ctx, who, handle, payload.undo)
