"""Per-trait decision thresholds: a version's PR curve on the evaluation set, and the thresholds chosen on it.

A threshold belongs to the version (a tag pointing at the version carries it); score responses add the
decision next to the calibrated score. Definitions: docs/engine.md; the API: docs/api.md.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from core.contract import POSITIVE_THRESHOLD
from core.engine.thresholds import choose_threshold, pr_curve
from service.auth import AnyKey, AuthoringKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.domain.evaluation import labelled_scores, stored_evaluation
from service.domain.versions import resolve_version
from service.errors import ApiError
from service.routes.common import errors
from service.schemas import Strict
from service.states import require_not_archived
from service.tables import utcnow

router = APIRouter(tags=["evaluation"])
VersionRef = Annotated[str, Path(max_length=64, description="`vN` or a tag")]
TraitKey = Annotated[str, Path(max_length=64, description="a trait key")]


class PrPoint(BaseModel):
    threshold: float
    precision: float
    recall: float


class PrTrait(BaseModel):
    positive: int
    negative: int
    points: list[PrPoint]


class PrCurveOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    traits: dict[str, PrTrait]


class ThresholdIn(Strict):
    target: Literal["precision", "recall"]
    value: float = Field(gt=0.0, le=1.0)


class ThresholdOut(BaseModel):
    trait: str
    threshold: float
    target: str
    value: float
    precision: float
    recall: float
    run_id: str
    items: int
    set_at: str


class ThresholdsOut(BaseModel):
    handle: str
    version_no: int
    thresholds: dict[str, ThresholdOut]


class ThresholdDeleted(BaseModel):
    handle: str
    version_no: int
    trait: str
    deleted: bool


@router.get("/models/{handle}/versions/{ref}/pr-curve", response_model=PrCurveOut, responses=errors(404, 409))
def get_pr_curve(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> PrCurveOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        found = stored_evaluation(s, model, version)
        traits: dict[str, PrTrait] = {}
        for key in sorted(found.metrics["item_scores"]):
            scores, quality = labelled_scores(s, found, key)
            if len(scores):
                positive = int((quality >= POSITIVE_THRESHOLD).sum())
                traits[key] = PrTrait(
                    positive=positive,
                    negative=len(quality) - positive,
                    points=[PrPoint(**p) for p in pr_curve(scores, quality)],
                )
        return PrCurveOut(
            handle=model.handle, version_no=version.version_no, run_id=found.run_id, traits=traits
        )


@router.get("/models/{handle}/versions/{ref}/thresholds", response_model=ThresholdsOut, responses=errors(404))
def get_thresholds(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> ThresholdsOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        stored = version.thresholds or {}
        return ThresholdsOut(
            handle=model.handle,
            version_no=version.version_no,
            thresholds={k: ThresholdOut(**v) for k, v in sorted(stored.items())},
        )


@router.put(
    "/models/{handle}/versions/{ref}/thresholds/{trait}",
    response_model=ThresholdOut,
    responses=errors(403, 404, 409),
)
def set_threshold(
    handle: str, ref: VersionRef, trait: TraitKey, body: ThresholdIn, who: AuthoringKey, ctx: CtxDep
) -> ThresholdOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)  # locks the model row: one threshold write at a time
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        found = stored_evaluation(s, model, version)
        scores, quality = labelled_scores(s, found, trait)
        if not len(scores):
            raise ApiError(
                422,
                "trait_not_evaluated",
                f"v{version.version_no} has no evaluated items of trait {trait!r}: "
                "add evaluation items of it and evaluate the version.",
            )
        chosen = choose_threshold(scores, quality, body.target, body.value)
        if chosen is None:
            raise ApiError(
                422,
                "target_unreachable",
                f"No threshold reaches {body.target} {body.value} for {trait!r} on the evaluation set "
                "(it needs positive and negative items, and a reachable target).",
            )
        entry = ThresholdOut(
            trait=trait,
            target=body.target,
            value=body.value,
            run_id=found.run_id,
            items=len(scores),
            set_at=utcnow().isoformat(),
            threshold=round(chosen["threshold"], 6),  # as scores are returned: decision = score ≥ threshold
            precision=chosen["precision"],
            recall=chosen["recall"],
        )
        version.thresholds = {**(version.thresholds or {}), trait: entry.model_dump()}  # a new dict: tracked
        return entry


@router.delete(
    "/models/{handle}/versions/{ref}/thresholds/{trait}",
    response_model=ThresholdDeleted,
    responses=errors(403, 404, 409),
)
def delete_threshold(handle: str, ref: VersionRef, trait: TraitKey, who: AuthoringKey, ctx: CtxDep) -> Any:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        stored = dict(version.thresholds or {})
        deleted = stored.pop(trait, None) is not None
        if deleted:
            version.thresholds = stored or None
        return ThresholdDeleted(
            handle=model.handle, version_no=version.version_no, trait=trait, deleted=deleted
        )
