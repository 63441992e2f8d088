"""Evaluation sets: held-out labelled items per model, never trained on; evaluate versions; read metrics."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status

from core.contract import MAX_VERSION_REF_CHARS
from service.domain import evaluation
from service.http.auth import AnyKey, AuthoringKey, CtxDep
from service.http.ratelimit import small_import
from service.routes.common import errors
from service.schemas.evaluation import (
    EvalAdded,
    EvalDeleted,
    EvalItemsIn,
    EvalSetOut,
    EvaluationOut,
    EvaluationStarted,
)

router = APIRouter(tags=["evaluation"])
VersionRef = Annotated[str, Path(max_length=MAX_VERSION_REF_CHARS, description="`vN` or a tag")]


@router.post(
    "/models/{handle}/evaluation-set",
    status_code=status.HTTP_201_CREATED,
    response_model=EvalAdded,
    responses=errors(403, 404, 409),
)
def add_items(handle: str, payload: EvalItemsIn, who: AuthoringKey, ctx: CtxDep) -> EvalAdded:
    small_import(ctx, who, handle, len(payload.items))
    return evaluation.add_items(ctx, who, handle, payload.items)


@router.get("/models/{handle}/evaluation-set", response_model=EvalSetOut, responses=errors(403, 404))
def get_set(handle: str, who: AuthoringKey, ctx: CtxDep) -> EvalSetOut:
    return evaluation.get_set(ctx, who, handle)


@router.delete("/models/{handle}/evaluation-set", response_model=EvalDeleted, responses=errors(403, 404, 409))
def clear_set(handle: str, who: AuthoringKey, ctx: CtxDep) -> EvalDeleted:
    return evaluation.clear_set(ctx, who, handle)


@router.post(
    "/models/{handle}/versions/{ref}/evaluate",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=EvaluationStarted,
    responses=errors(403, 404, 409),
)
def evaluate(handle: str, ref: VersionRef, who: AuthoringKey, ctx: CtxDep) -> EvaluationStarted:
    return evaluation.start_evaluation(ctx, who, handle, ref)


@router.get("/models/{handle}/versions/{ref}/evaluation", response_model=EvaluationOut, responses=errors(404))
def get_evaluation(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> EvaluationOut:
    return evaluation.get_evaluation(ctx, who, handle, ref)
