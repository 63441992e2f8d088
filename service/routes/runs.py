"""Background runs: starting them (train: first, retune; discover; synthesize) and cancelling one."""

from __future__ import annotations

from fastapi import APIRouter, Body, Response, status

from service.domain import training
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import RUN_ID_HEADER, errors
from service.schemas.models import ModelOut
from service.schemas.runs import DiscoverIn, RunStarted, SynthesizeIn, TrainIn

router = APIRouter(tags=["runs"])

_RUN_ERRORS = errors(403, 404, 409)
_RUN_ERRORS[409] = {**_RUN_ERRORS[409], "headers": RUN_ID_HEADER}


# The optional body keeps its OpenAPI title "Body" (FastAPI would title it after the parameter).
@router.post(
    "/models/{handle}/train",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunStarted,
    responses={
        200: {"model": RunStarted, "description": "Ready model, no re-optimization: nothing queued"},
        **_RUN_ERRORS,
    },
)
def train(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    response: Response,
    payload: TrainIn | None = Body(default=None, title="Body"),
) -> RunStarted:
    started = training.start_training(ctx, who, handle, payload or TrainIn())
    if started.state == "ready":
        response.status_code = status.HTTP_200_OK
    return started


@router.post(
    "/models/{handle}/traits/discover",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunStarted,
    responses=_RUN_ERRORS,
)
def discover(
    handle: str, who: AuthoringKey, ctx: CtxDep, payload: DiscoverIn | None = Body(default=None, title="Body")
) -> RunStarted:
    return training.start_discovery(ctx, who, handle, payload or DiscoverIn())


@router.post(
    "/models/{handle}/samples/synthesize",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunStarted,
    responses=_RUN_ERRORS,
)
def synthesize(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    payload: SynthesizeIn | None = Body(default=None, title="Body"),
) -> RunStarted:
    return training.start_synthesis(ctx, who, handle, payload or SynthesizeIn())


@router.post(
    "/models/{handle}/runs/{run_id}/cancel", response_model=ModelOut, responses=errors(403, 404, 409)
)
def cancel(handle: str, run_id: str, who: AuthoringKey, ctx: CtxDep) -> ModelOut:
    return training.cancel_run(ctx, who, handle, run_id)
