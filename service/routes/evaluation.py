"""Evaluation sets: held-out labelled items per model, never trained on; evaluate versions; read metrics."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, status
from pydantic import BaseModel, Field
from sqlalchemy import delete, func, select

from core.contract import POSITIVE_THRESHOLD
from service.auth import AnyKey, AuthoringKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.domain.samples import sha256
from service.domain.traits import TraitRefs
from service.domain.versions import resolve_version
from service.errors import ApiError
from service.routes.common import errors
from service.runs import ledger
from service.schemas import SampleIn, Strict
from service.states import busy_error, require_not_archived
from service.tables import EvalItem, Evaluation, utcnow

router = APIRouter(tags=["evaluation"])
VersionRef = Annotated[str, Path(max_length=64, description="`vN` or a tag")]


class EvalItemsIn(Strict):
    items: list[SampleIn] = Field(min_length=1, max_length=500)


class EvalAdded(BaseModel):
    added: int
    total: int


class EvalTraitCounts(BaseModel):
    positive: int
    negative: int


class EvalSetOut(BaseModel):
    handle: str
    total: int
    traits: dict[str, EvalTraitCounts]


class EvalDeleted(BaseModel):
    handle: str
    deleted: int


class EvaluationStarted(BaseModel):
    state: str
    run_id: str
    version_no: int


class EvaluationOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    created_at: datetime
    items: int
    traits: dict[str, Any]


def _zdr_refusal() -> ApiError:
    return ApiError(
        409,
        "zero_data_retention",
        "Under zero-data-retention no labelled text is kept, evaluation items neither.",
    )


@router.post(
    "/models/{handle}/evaluation-set",
    status_code=status.HTTP_201_CREATED,
    response_model=EvalAdded,
    responses=errors(403, 404, 409),
)
def add_items(handle: str, body: EvalItemsIn, who: AuthoringKey, ctx: CtxDep) -> EvalAdded:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        if model.zero_data_retention:
            raise _zdr_refusal()
        refs = TraitRefs(s, model)
        stored: set[tuple[str, str, float]] = {
            (row.trait_key, row.content_sha256, row.quality)
            for row in s.execute(
                select(EvalItem.trait_key, EvalItem.content_sha256, EvalItem.quality).where(
                    EvalItem.model_id == model.id
                )
            )
        }
        added = 0
        for i, item in enumerate(body.items):
            key = refs.find(item.trait, ("body", "items", i, "trait")).key
            digest = sha256(item.text)
            if (key, digest, item.quality) in stored:  # re-importing a file adds nothing
                continue
            stored.add((key, digest, item.quality))
            s.add(
                EvalItem(
                    model_id=model.id,
                    trait_key=key,
                    text=item.text,
                    quality=item.quality,
                    content_sha256=digest,
                    created_at=utcnow(),
                )
            )
            added += 1
        return EvalAdded(added=added, total=len(stored))


@router.get("/models/{handle}/evaluation-set", response_model=EvalSetOut, responses=errors(403, 404))
def get_set(handle: str, who: AuthoringKey, ctx: CtxDep) -> EvalSetOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        rows = s.execute(
            select(EvalItem.trait_key, EvalItem.quality >= POSITIVE_THRESHOLD, func.count())
            .where(EvalItem.model_id == model.id)
            .group_by(EvalItem.trait_key, EvalItem.quality >= POSITIVE_THRESHOLD)
        ).all()
    traits: dict[str, EvalTraitCounts] = {}
    for key, positive, count in rows:
        entry = traits.setdefault(key, EvalTraitCounts(positive=0, negative=0))
        if positive:
            entry.positive += count
        else:
            entry.negative += count
    return EvalSetOut(handle=handle, total=sum(c for *_, c in rows), traits=dict(sorted(traits.items())))


@router.delete("/models/{handle}/evaluation-set", response_model=EvalDeleted, responses=errors(403, 404, 409))
def clear_set(handle: str, who: AuthoringKey, ctx: CtxDep) -> EvalDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        result = s.execute(delete(EvalItem).where(EvalItem.model_id == model.id))
        return EvalDeleted(handle=handle, deleted=int(result.rowcount or 0))  # type: ignore[attr-defined]


@router.post(
    "/models/{handle}/versions/{ref}/evaluate",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=EvaluationStarted,
    responses=errors(403, 404, 409),
)
def evaluate(handle: str, ref: VersionRef, who: AuthoringKey, ctx: CtxDep) -> EvaluationStarted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        if model.state == "busy":
            raise busy_error(s, model)
        count = s.scalar(select(func.count()).select_from(EvalItem).where(EvalItem.model_id == model.id)) or 0
        if not count:
            raise ApiError(422, "no_evaluation_set", f"{handle} has no evaluation items: add some first.")
        run = ledger.create_run(s, model, "evaluate", {"version_no": version.version_no})
        run_id, version_no = run.id, version.version_no
    ctx.enqueue(run_id)
    return EvaluationStarted(state="busy", run_id=run_id, version_no=version_no)


@router.get("/models/{handle}/versions/{ref}/evaluation", response_model=EvaluationOut, responses=errors(404))
def get_evaluation(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> EvaluationOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        found = s.scalar(
            select(Evaluation)
            .where(Evaluation.model_id == model.id, Evaluation.version_no == version.version_no)
            .order_by(Evaluation.id.desc())
            .limit(1)
        )
        if found is None:
            raise ApiError(
                404, "evaluation_not_found", f"v{version.version_no} of {handle} was not evaluated yet."
            )
        return EvaluationOut(
            handle=model.handle,
            version_no=found.version_no,
            run_id=found.run_id,
            created_at=found.created_at,
            items=found.item_count,
            traits=found.metrics.get("traits", {}),
        )
