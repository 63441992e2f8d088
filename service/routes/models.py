"""Models: create, list, get, update, delete, reopen."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from core.contract import MAX_CURSOR_CHARS, MAX_KIND_CHARS, MAX_NAMESPACE_CHARS, MODELS_PAGE, ModelState
from service.domain import models
from service.http.auth import AnyKey, AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.common import Deleted
from service.schemas.models import ModelCreate, ModelOut, ModelPage, ModelPatch

router = APIRouter(tags=["models"])


@router.post(
    "/models", status_code=status.HTTP_201_CREATED, response_model=ModelOut, responses=errors(403, 409)
)
def create_model(payload: ModelCreate, who: AuthoringKey, ctx: CtxDep) -> ModelOut:
    return models.create_model(ctx, who, payload)


@router.get("/models", response_model=ModelPage, responses=errors(400, 403))
def list_models(
    who: AnyKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=MODELS_PAGE.maximum)] = MODELS_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
    namespace: Annotated[
        str | None, Query(max_length=MAX_NAMESPACE_CHARS, description="Default: the public catalog")
    ] = None,
    state: Annotated[ModelState | None, Query()] = None,
    kind: Annotated[str | None, Query(max_length=MAX_KIND_CHARS)] = None,
) -> ModelPage:
    return models.list_models(ctx, who, limit, cursor, namespace, state, kind)


@router.get("/models/{handle}", response_model=ModelOut, responses=errors(404))
def get_model(handle: str, who: AnyKey, ctx: CtxDep) -> ModelOut:
    return models.get_model(ctx, who, handle)


@router.patch("/models/{handle}", response_model=ModelOut, responses=errors(403, 404, 409))
def update_model(handle: str, payload: ModelPatch, who: AuthoringKey, ctx: CtxDep) -> ModelOut:
    return models.update_model(ctx, who, handle, payload)


@router.delete("/models/{handle}", response_model=Deleted, responses=errors(403, 404, 409))
def delete_model(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    purge: Annotated[
        bool,
        Query(
            description="Delete the model and everything stored under it for good; its handle is free again"
        ),
    ] = False,
) -> Deleted:
    if purge:
        return models.purge_model(ctx, who, handle)
    return models.delete_model(ctx, who, handle)


@router.post("/models/{handle}/reopen", response_model=ModelOut, responses=errors(403, 404, 409))
def reopen_model(handle: str, who: AuthoringKey, ctx: CtxDep) -> ModelOut:
    return models.reopen_model(ctx, who, handle)
