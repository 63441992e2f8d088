"""Unsure marks and comments on a model's texts (docs/api.md, "Unsure and comments").

Both kinds of note have the same three routes under /models/{handle}/ (add, list in pages, delete by id),
keys and answers: `note_routes` declares them once, each kind naming its path, bodies and domain calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

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


def note_routes(
    kind: str,
    id_name: str,
    docs: tuple[str, str],
    bodies: tuple[type[BaseModel], type[BaseModel], type[BaseModel]],
    add: Callable[..., BaseModel],  # (ctx, who, handle, payload)
    page: Callable[..., BaseModel],  # (ctx, who, handle, trait, limit, cursor)
    delete: Callable[..., NoteDeleted],  # (ctx, who, handle, note id)
) -> None:
    """POST, GET and DELETE /models/{handle}/`kind`[/{`id_name`}], each named as the domain function it calls
    (the OpenAPI operation ids follow the names): `docs` are the add and delete routes' descriptions, `bodies`
    the request, item and page bodies."""
    body_in, out, page_out = bodies

    def add_note(handle: str, payload: BaseModel, who: AuthoringKey, ctx: CtxDep) -> BaseModel:
        return add(ctx, who, handle, payload)

    def list_notes(
        handle: str,
        who: AuthoringKey,
        ctx: CtxDep,
        trait: TraitFilter = None,
        limit: Limit = NOTES_PAGE.default,
        cursor: Cursor = None,
    ) -> BaseModel:
        return page(ctx, who, handle, trait, limit, cursor)

    def delete_note(handle: str, note_id: int, who: AuthoringKey, ctx: CtxDep) -> NoteDeleted:
        return delete(ctx, who, handle, note_id)

    # FastAPI reads a route's body model and parameter names from the annotations (strings, resolved in this
    # module's globals): the kind's are set here, the path parameter under the kind's name.
    add_note.__annotations__["payload"] = body_in
    delete_note.__annotations__["note_id"] = Annotated[int, Path(alias=id_name)]

    path = f"/models/{{handle}}/{kind}"
    add_doc, delete_doc = docs
    router.add_api_route(
        path,
        add_note,
        methods=["POST"],
        name=add.__name__,
        description=add_doc,
        status_code=201,
        response_model=out,
        responses=errors(403, 404, 409, 422),
    )
    router.add_api_route(
        path,
        list_notes,
        methods=["GET"],
        name=page.__name__,
        response_model=page_out,
        responses=errors(400, 403, 404, 422),
    )
    router.add_api_route(
        f"{path}/{{{id_name}:int}}",
        delete_note,
        methods=["DELETE"],
        name=delete.__name__,
        description=delete_doc,
        response_model=NoteDeleted,
        responses=errors(403, 404, 409),
    )


note_routes(
    "unsure",
    "mark_id",
    (
        "Mark a text of a trait unsure (the caller's own mark; again: the stored one). Never a vote.",
        "Take an unsure mark back: one's own, or (reviewer) a colleague's.",
    ),
    (UnsureIn, UnsureOut, UnsurePage),
    notes.mark_unsure,
    notes.list_unsure,
    notes.delete_unsure,
)
note_routes(
    "comments",
    "comment_id",
    (
        "A comment on a text of a trait, signed with the caller's annotator name.",
        "Delete a comment: one's own, or (reviewer) a colleague's.",
    ),
    (CommentIn, CommentOut, CommentPage),
    notes.add_comment,
    notes.list_comments,
    notes.delete_comment,
)
