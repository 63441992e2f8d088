"""Per-trait decision thresholds: a version's PR curve on the evaluation set, and the thresholds chosen on it.

A threshold belongs to the version (a tag pointing at the version carries it); score responses add the
decision next to the calibrated score. Definitions: docs/engine-evaluation.md; the API: docs/api.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from core.contract import MAX_TRAIT_KEY, MAX_VERSION_REF_CHARS
from service.domain import thresholds
from service.http.auth import AnyKey, AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.thresholds import PrCurveOut, ThresholdDeleted, ThresholdIn, ThresholdOut, ThresholdsOut

router = APIRouter(tags=["evaluation"])
VersionRef = Annotated[str, Path(max_length=MAX_VERSION_REF_CHARS, description="`vN` or a tag")]
TraitKey = Annotated[str, Path(max_length=MAX_TRAIT_KEY, description="a trait key")]


@router.get("/models/{handle}/versions/{ref}/pr-curve", response_model=PrCurveOut, responses=errors(404, 409))
def get_pr_curve(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> PrCurveOut:
    return thresholds.get_pr_curve(ctx, who, handle, ref)


@router.get("/models/{handle}/versions/{ref}/thresholds", response_model=ThresholdsOut, responses=errors(404))
def get_thresholds(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> ThresholdsOut:
    return thresholds.get_thresholds(ctx, who, handle, ref)


@router.put(
    "/models/{handle}/versions/{ref}/thresholds/{trait}",
    response_model=ThresholdOut,
    responses=errors(403, 404, 409),
)
def set_threshold(
    handle: str, ref: VersionRef, trait: TraitKey, payload: ThresholdIn, who: AuthoringKey, ctx: CtxDep
) -> ThresholdOut:
    return thresholds.set_threshold(ctx, who, handle, ref, trait, payload)


@router.delete(
    "/models/{handle}/versions/{ref}/thresholds/{trait}",
    response_model=ThresholdDeleted,
    responses=errors(403, 404, 409),
)
def delete_threshold(
    handle: str, ref: VersionRef, trait: TraitKey, who: AuthoringKey, ctx: CtxDep
) -> ThresholdDeleted:
    return thresholds.delete_threshold(ctx, who, handle, ref, trait)
