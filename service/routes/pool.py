"""A model's unlabelled pool: import texts, list (keyset pages), delete, and suggest what to label next."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status
from pydantic import StringConstraints, WithJsonSchema

from core.contract import (
    MAX_CURSOR_CHARS,
    MAX_LABEL_CHARS,
    MAX_METADATA_KEYS,
    MAX_POOL_QUERY_CHARS,
    POOL_PAGE,
)
from service.domain import claims, labelling, pool, suggestions
from service.http.auth import AuthoringKey, CtxDep
from service.http.heavy import heavy
from service.http.ratelimit import small_import
from service.routes.common import errors
from service.schemas.common import META_FILTER_RULE_PATTERN
from service.schemas.pool import (
    META_FILTER_PATTERN,
    BulkLabelIn,
    BulkLabelled,
    ClaimReleased,
    LabelIn,
    Labelled,
    PoolAdded,
    PoolDeleted,
    PoolIn,
    PoolPage,
    SuggestIn,
    SuggestOut,
)
from service.schemas.samples import SampleDeleted

router = APIRouter(tags=["pool"])


@router.post(
    "/models/{handle}/pool",
    status_code=status.HTTP_201_CREATED,
    response_model=PoolAdded,
    responses=errors(403, 404, 409),
)
def add_pool_texts(
    handle: str, payload: PoolIn, who: AuthoringKey, ctx: CtxDep, request: Request
) -> PoolAdded:
    small_import(ctx, who, handle, len(payload.texts))
    with heavy(request, who):
        return pool.add_pool_texts(ctx, who, handle, payload)


@router.get("/models/{handle}/pool", response_model=PoolPage, responses=errors(400, 403, 404, 429))
def list_pool(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=POOL_PAGE.maximum)] = POOL_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_POOL_QUERY_CHARS,
            description="Only texts containing this phrase, letter case aside (addition).",
        ),
    ] = None,
    meta: Annotated[
        # Validated by the first colon alone (not `key:value`: 422 validation_error); the document states the
        # whole rule, which the domain checks with its own error (docs/api/review.md, "Text metadata").
        list[
            Annotated[
                str,
                StringConstraints(pattern=META_FILTER_PATTERN),
                WithJsonSchema({"type": "string", "pattern": META_FILTER_RULE_PATTERN}),
            ]
        ]
        | None,
        Query(
            description="`key:value`: only texts whose metadata `key` has this value (compared as text); "
            "repeat for several, all of which must match (addition).",
            json_schema_extra={"maxItems": MAX_METADATA_KEYS},
        ),
    ] = None,
) -> PoolPage:
    with heavy(request, who):
        return pool.list_pool(ctx, who, handle, limit, cursor, q=q, meta=meta)


@router.delete(
    "/models/{handle}/pool/{text_id:int}", response_model=SampleDeleted, responses=errors(403, 404, 409)
)
def delete_pool_text(handle: str, text_id: int, who: AuthoringKey, ctx: CtxDep) -> SampleDeleted:
    return pool.delete_pool_text(ctx, who, handle, text_id)


@router.delete("/models/{handle}/pool", response_model=PoolDeleted, responses=errors(403, 404, 409))
def clear_pool(handle: str, who: AuthoringKey, ctx: CtxDep) -> PoolDeleted:
    return pool.clear_pool(ctx, who, handle)


@router.post("/models/{handle}/pool/suggest", response_model=SuggestOut, responses=errors(403, 404))
def suggest_next(
    handle: str, payload: SuggestIn, who: AuthoringKey, ctx: CtxDep, request: Request
) -> SuggestOut:
    # Ends at its next piece of work when its client leaves (499) or the process stops (503).
    with heavy(request, who) as still_wanted:
        share = request.app.state.share
        return suggestions.suggest_next(ctx, who, handle, payload, still_wanted, share)


@router.post(
    "/models/{handle}/pool/{text_id:int}/label",
    status_code=status.HTTP_201_CREATED,
    response_model=Labelled,
    responses=errors(403, 404, 409),
)
def label_pool_text(handle: str, text_id: int, payload: LabelIn, who: AuthoringKey, ctx: CtxDep) -> Labelled:
    """Label a pool text for a trait: a sample of an untrained draft, else buffered feedback for the next
    version (also while a run is in flight); the caller's claim on the text ends."""
    return labelling.label_pool_text(ctx, who, handle, text_id, payload)


@router.post(
    "/models/{handle}/pool/label",
    status_code=status.HTTP_201_CREATED,
    response_model=BulkLabelled,
    responses=errors(403, 404, 409),
)
def label_pool_texts(handle: str, payload: BulkLabelIn, who: AuthoringKey, ctx: CtxDep) -> BulkLabelled:
    """One label for several pool texts (a selection, e.g. a search's page), a reviewer's or an owner's:
    a vote of the caller's on each text, one event in the audit log (addition)."""
    return labelling.label_pool_texts(ctx, who, handle, payload)


@router.delete(
    "/models/{handle}/pool/{text_id:int}/claim",
    response_model=ClaimReleased,
    responses=errors(403, 404, 409, 422),
)
def release_claim(
    handle: str,
    text_id: int,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: Annotated[str | None, Query(min_length=1, max_length=MAX_LABEL_CHARS)] = None,
) -> ClaimReleased:
    """Let go of a claimed text (a skip): colleagues may be handed it at once."""
    return claims.release_claim(ctx, who, handle, text_id, trait)
