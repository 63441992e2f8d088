"""Traits: list, add, update, delete (edits only on an untrained model)."""

from __future__ import annotations

from fastapi import APIRouter, status

from service.domain import traits
from service.http.auth import AnyKey, AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.common import Deleted
from service.schemas.traits import TraitPatch, TraitsIn, TraitsOut

router = APIRouter(tags=["traits"])


@router.get("/models/{handle}/traits", response_model=TraitsOut, responses=errors(404))
def list_traits(handle: str, who: AnyKey, ctx: CtxDep) -> TraitsOut:
    return traits.list_traits(ctx, who, handle)


@router.post(
    "/models/{handle}/traits",
    status_code=status.HTTP_201_CREATED,
    response_model=TraitsOut,
    responses=errors(403, 404, 409),
)
def add_traits(handle: str, payload: TraitsIn, who: AuthoringKey, ctx: CtxDep) -> TraitsOut:
    return traits.add_traits(ctx, who, handle, payload.traits)


@router.patch("/models/{handle}/traits/{key}", response_model=TraitsOut, responses=errors(403, 404, 409))
def update_trait(handle: str, key: str, payload: TraitPatch, who: AuthoringKey, ctx: CtxDep) -> TraitsOut:
    return traits.update_trait(ctx, who, handle, key, payload)


@router.delete("/models/{handle}/traits/{key}", response_model=Deleted, responses=errors(403, 404, 409))
def delete_trait(handle: str, key: str, who: AuthoringKey, ctx: CtxDep) -> Deleted:
    return traits.delete_trait(ctx, who, handle, key)
