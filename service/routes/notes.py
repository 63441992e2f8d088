"""Unsure marks and comments on a model's texts (docs/api.md, "Unsure and comments")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import MAX_CURSOR_CHARS, MAX_LABEL_CHARS, NOTES_PAGE
from service.domain import notes
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.notes import (
    CommentIn,
    CommentOut,
    CommentPage,
    NoteDeleted,
    UnsureIn,
    UnsureOut,
    UnsurePage,
)

router = APIRouter(tags=["notes"])

TraitFilter = Annotated[
    str | None, Query(max_length=MAX_LABEL_CHARS, description="a trait key or name; absent: all")
]
Limit = Annotated[int, Query(ge=1, le=NOTES_PAGE.maximum)]
Cursor = Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)]


@router.post(
    "/models/{handle}/unsure", status_code=201, response_model=UnsureOut, responses=errors(403, 404, 409, 422)
)
def mark_unsure(handle: str, body: UnsureIn, who: AuthoringKey, ctx: CtxDep) -> UnsureOut:
    """Mark a text of a trait unsure (the caller's own mark; again: the stored one). Never a vote."""
    return notes.mark_unsure(ctx, who, handle, body)


@router.get("/models/{handle}/unsure", response_model=UnsurePage, responses=errors(400, 403, 404, 422))
def list_unsure(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: TraitFilter = None,
    limit: Limit = NOTES_PAGE.default,
    cursor: Cursor = None,
) -> UnsurePage:
    return notes.list_unsure(ctx, who, handle, trait, limit, cursor)


@router.delete(
    "/models/{handle}/unsure/{mark_id:int}", response_model=NoteDeleted, responses=errors(403, 404, 409)
)
def delete_unsure(handle: str, mark_id: int, who: AuthoringKey, ctx: CtxDep) -> NoteDeleted:
    """Take an unsure mark back: one's own, or (reviewer) a colleague's."""
    return notes.delete_unsure(ctx, who, handle, mark_id)


@router.post(
    "/models/{handle}/comments",
    status_code=201,
    response_model=CommentOut,
    responses=errors(403, 404, 409, 422),
)
def add_comment(handle: str, body: CommentIn, who: AuthoringKey, ctx: CtxDep) -> CommentOut:
    """A comment on a text of a trait, signed with the caller's annotator name."""
    return notes.add_comment(ctx, who, handle, body)


@router.get("/models/{handle}/comments", response_model=CommentPage, responses=errors(400, 403, 404, 422))
def list_comments(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: TraitFilter = None,
    limit: Limit = NOTES_PAGE.default,
    cursor: Cursor = None,
) -> CommentPage:
    return notes.list_comments(ctx, who, handle, trait, limit, cursor)


@router.delete(
    "/models/{handle}/comments/{comment_id:int}", response_model=NoteDeleted, responses=errors(403, 404, 409)
)
def delete_comment(handle: str, comment_id: int, who: AuthoringKey, ctx: CtxDep) -> NoteDeleted:
    """Delete a comment: one's own, or (reviewer) a colleague's."""
    return notes.delete_comment(ctx, who, handle, comment_id)
