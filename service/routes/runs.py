"""Starting background runs: train (first, retune), discover, synthesize."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Response, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import MAX_TRAITS, RunKind
from service.auth import AuthoringKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.domain.training import check_trainable, fingerprint, idempotency_key, sample_count
from service.errors import ApiError
from service.routes.common import RUN_ID_HEADER, errors
from service.runs import ledger
from service.schemas import DiscoverIn, RunStarted, SynthesizeIn, TrainIn
from service.states import busy_error, require_not_archived, require_untrained
from service.tables import Model, Run, Trait

router = APIRouter(tags=["runs"])

_RUN_ERRORS = errors(403, 404, 409)
_RUN_ERRORS[409] = {**_RUN_ERRORS[409], "headers": RUN_ID_HEADER}


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
    handle: str, who: AuthoringKey, ctx: CtxDep, response: Response, body: TrainIn | None = Body(default=None)
) -> RunStarted:
    body = body or TrainIn()
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        if model.state == "busy":
            run = ledger.in_flight(s, model)
            if run is not None and run.kind == "train":
                return RunStarted(state="busy", run_id=run.id)  # idempotent hit on the run in flight
            raise busy_error(s, model)
        if model.state == "ready" and not body.reoptimize_params:
            response.status_code = status.HTTP_200_OK
            return RunStarted(state="ready", run_id=None)
        check_trainable(s, model)
        triggered_by = "retune" if model.state == "ready" else "train"
        options: dict[str, Any] = {"effort": body.effort or "medium", "triggered_by": triggered_by}
        if model.state == "draft" and model.current_version_id is not None:
            options["with_feedback"] = True  # a reopened draft: its buffered feedback joins the training
        run = ledger.create_run(s, model, "train", options)
        run_id = run.id
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)


def _duplicate_error(run: Run) -> ApiError:
    return ApiError(
        409,
        "duplicate_run",
        f"The same {run.kind} already ran or is running on these samples and effort ({run.id}).",
        retryable=False,
        headers={"X-Run-Id": run.id},
    )


def _reject_in_flight_duplicate(s: Session, model: Model, key: str) -> None:
    """A repeat of the run in flight is a duplicate (not merely 'busy')."""
    require_not_archived(model)
    run = ledger.in_flight(s, model)
    if run is not None and run.idempotency_key == key:
        raise _duplicate_error(run)


def _start_unique(s: Session, model: Model, kind: RunKind, options: dict[str, Any], key: str) -> str:
    duplicate = ledger.find_duplicate(s, model.id, key)
    if duplicate is not None:
        raise _duplicate_error(duplicate)
    return ledger.create_run(s, model, kind, options, idempotency_key=key).id


@router.post(
    "/models/{handle}/traits/discover",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunStarted,
    responses=_RUN_ERRORS,
)
def discover(
    handle: str, who: AuthoringKey, ctx: CtxDep, body: DiscoverIn | None = Body(default=None)
) -> RunStarted:
    body = body or DiscoverIn()
    options = {"effort": body.effort or "medium"}
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        key = idempotency_key("discover", options, fingerprint(s, model, "discovered", extrinsic_only=True))
        _reject_in_flight_duplicate(s, model, key)
        require_untrained(s, model)
        if not sample_count(s, model):
            raise ApiError(422, "no_samples", "Discovery needs labelled samples.")
        if len(s.scalars(select(Trait.id).where(Trait.model_id == model.id)).all()) >= MAX_TRAITS:
            raise ApiError(
                422, "validation_error", f"A model has at most {MAX_TRAITS} traits: no room to discover more."
            )
        run_id = _start_unique(s, model, "discover", options, key)
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)


@router.post(
    "/models/{handle}/samples/synthesize",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunStarted,
    responses=_RUN_ERRORS,
)
def synthesize(
    handle: str, who: AuthoringKey, ctx: CtxDep, body: SynthesizeIn | None = Body(default=None)
) -> RunStarted:
    body = body or SynthesizeIn()
    options = {"effort": body.effort or "medium", "synth_type": body.synth_type}
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        key = idempotency_key(
            "synthesize", options, fingerprint(s, model, "synthesized", extrinsic_only=False)
        )
        _reject_in_flight_duplicate(s, model, key)
        require_untrained(s, model)
        if not s.scalars(select(Trait.id).where(Trait.model_id == model.id).limit(1)).first():
            raise ApiError(422, "no_traits", "Synthesis needs at least one trait.")
        if body.synth_type == "diversify" and not sample_count(s, model):
            raise ApiError(422, "no_samples", "diversify needs seed samples to vary.")
        run_id = _start_unique(s, model, "synthesize", options, key)
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)
