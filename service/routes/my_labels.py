"""One's own labels on a model: list them, change or withdraw one (docs/api.md "One's own labels")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request

from core.contract import MAX_CURSOR_CHARS, MAX_LABEL_CHARS, MAX_SEARCH_CHARS, MY_LABELS_PAGE
from service.domain import my_labels, undo_label
from service.http.auth import AuthoringKey, CtxDep
from service.http.heavy import heavy
from service.routes.common import errors
from service.schemas.my_labels import LabelKind, MyLabel, MyLabelPage, MyLabelPatch, MyLabelWithdrawn

router = APIRouter(tags=["my-labels"])


@router.get("/models/{handle}/my-labels", response_model=MyLabelPage, responses=errors(400, 403, 404, 429))
def list_my_labels(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    request: Request,
    q: Annotated[
        str | None, Query(max_length=MAX_SEARCH_CHARS, description="Text contains (any case).")
    ] = None,
    trait: Annotated[str | None, Query(max_length=MAX_LABEL_CHARS)] = None,
    since: Annotated[datetime | None, Query(description="Only labels given at or after this time.")] = None,
    limit: Annotated[int, Query(ge=1, le=MY_LABELS_PAGE.maximum)] = MY_LABELS_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> MyLabelPage:
    """The caller's own labels on the model, newest first."""
    with heavy(request, who):  # a text search reads every label of the caller
        return my_labels.list_my_labels(ctx, who, handle, q, trait, since, limit, cursor)


@router.patch(
    "/models/{handle}/my-labels/{kind}/{label_id:int}",
    response_model=MyLabel,
    responses=errors(403, 404, 409),
)
def change_my_label(
    handle: str, kind: LabelKind, label_id: int, payload: MyLabelPatch, who: AuthoringKey, ctx: CtxDep
) -> MyLabel:
    """Change one's own label while it is not yet trained into a version (409 `label_trained` after)."""
    return my_labels.change_my_label(ctx, who, handle, kind, label_id, payload)


@router.delete(
    "/models/{handle}/my-labels/{kind}/{label_id:int}",
    response_model=MyLabelWithdrawn,
    responses=errors(403, 404, 409),
)
def withdraw_my_label(
    handle: str, kind: LabelKind, label_id: int, who: AuthoringKey, ctx: CtxDep
) -> MyLabelWithdrawn:
    """Withdraw one's own label while it is not yet trained into a version (409 `label_trained` after)."""
    return my_labels.withdraw_my_label(ctx, who, handle, kind, label_id)


@router.delete(
    "/models/{handle}/pool/{text_id:int}/label",
    response_model=MyLabelWithdrawn,
    responses=errors(403, 404, 409, 422),
)
def withdraw_pool_label(
    handle: str,
    text_id: int,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: Annotated[str, Query(min_length=1, max_length=MAX_LABEL_CHARS)],
) -> MyLabelWithdrawn:
    """Undo one's label of a pool text for a trait (the newest, while not yet trained into a version), named
    by the text, not by a label id (addition)."""
    return undo_label.withdraw_pool_label(ctx, who, handle, text_id, trait)
