"""Samples: add (all or none, duplicates harmless), list (keyset pages), edit and delete (untrained model)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from core.contract import MAX_CURSOR_CHARS, MAX_LABEL_CHARS, SAMPLES_PAGE, Provenance
from service.domain import samples
from service.http.auth import AuthoringKey, CtxDep
from service.http.heavy import heavy
from service.http.ratelimit import small_import
from service.routes.common import errors
from service.schemas.samples import (
    SampleDeleted,
    SampleIds,
    SampleOut,
    SamplePage,
    SamplePatch,
    SamplesIn,
    Settled,
    SettleIn,
)

router = APIRouter(tags=["samples"])


@router.post(
    "/models/{handle}/samples",
    status_code=status.HTTP_201_CREATED,
    response_model=SampleIds,
    responses=errors(403, 404, 409),
)
def add_sample_batch(handle: str, payload: SamplesIn, who: AuthoringKey, ctx: CtxDep) -> SampleIds:
    small_import(ctx, who, handle, len(payload.samples))
    return samples.add_sample_batch(ctx, who, handle, payload.samples)


@router.get("/models/{handle}/samples", response_model=SamplePage, responses=errors(400, 403, 404, 429))
def list_samples(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    request: Request,
    trait: Annotated[str | None, Query(max_length=MAX_LABEL_CHARS)] = None,
    provenance: Annotated[Provenance | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=SAMPLES_PAGE.maximum)] = SAMPLES_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> SamplePage:
    with heavy(request, who):
        return samples.list_samples(ctx, who, handle, trait, provenance, limit, cursor)


@router.patch(
    "/models/{handle}/samples/{sample_id:int}", response_model=SampleOut, responses=errors(403, 404, 409)
)
def update_sample(
    handle: str, sample_id: int, payload: SamplePatch, who: AuthoringKey, ctx: CtxDep
) -> SampleOut:
    return samples.update_sample(ctx, who, handle, sample_id, payload)


@router.delete(
    "/models/{handle}/samples/{sample_id:int}", response_model=SampleDeleted, responses=errors(403, 404, 409)
)
def delete_sample(handle: str, sample_id: int, who: AuthoringKey, ctx: CtxDep) -> SampleDeleted:
    return samples.delete_sample(ctx, who, handle, sample_id)


@router.post("/models/{handle}/settle", response_model=Settled, responses=errors(403, 404, 409, 422))
def settle_text(handle: str, payload: SettleIn, who: AuthoringKey, ctx: CtxDep) -> Settled:
    """Settle a text of a trait with the caller's vote (the reviewer role), in any state but archived: the
    next training takes it in (docs/api.md "Agreement")."""
    return samples.settle_text(ctx, who, handle, payload)
