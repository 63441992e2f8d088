"""Gold items: texts with a known answer mixed into people's suggestions, and each person's accuracy on
them (docs/api.md, "Gold items"). Reviewers' and owners' only: an annotator never learns which are gold."""

from __future__ import annotations

from fastapi import APIRouter, status

from service.domain import gold
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.gold import GoldAccuracyOut, GoldAdded, GoldDeleted, GoldIn, GoldPromoteIn, GoldSetOut

router = APIRouter(tags=["gold"])


@router.post(
    "/models/{handle}/gold",
    status_code=status.HTTP_201_CREATED,
    response_model=GoldAdded,
    responses=errors(403, 404, 409, 422),
)
def add_gold(handle: str, payload: GoldIn, who: AuthoringKey, ctx: CtxDep) -> GoldAdded:
    """Add texts with their known answer per trait as gold items (the evaluation set's texts left out)."""
    return gold.add_gold(ctx, who, handle, payload)


@router.post("/models/{handle}/gold/promote", response_model=GoldAdded, responses=errors(403, 404, 409, 422))
def promote_gold(handle: str, payload: GoldPromoteIn, who: AuthoringKey, ctx: CtxDep) -> GoldAdded:
    """Make settled texts of a trait gold items, their settling vote the known answer."""
    return gold.promote(ctx, who, handle, payload)


@router.get("/models/{handle}/gold", response_model=GoldSetOut, responses=errors(403, 404))
def list_gold(handle: str, who: AuthoringKey, ctx: CtxDep) -> GoldSetOut:
    """Every gold item with its known answer and how many people answered it, how many rightly."""
    return gold.list_gold(ctx, who, handle)


@router.delete(
    "/models/{handle}/gold/{gold_id:int}", response_model=GoldDeleted, responses=errors(403, 404, 409)
)
def delete_gold(handle: str, gold_id: int, who: AuthoringKey, ctx: CtxDep) -> GoldDeleted:
    """Remove a gold item and its answers; its text stays in the pool, an ordinary text."""
    return gold.delete_gold(ctx, who, handle, gold_id)


@router.get("/models/{handle}/gold/accuracy", response_model=GoldAccuracyOut, responses=errors(403, 404))
def gold_accuracy(handle: str, who: AuthoringKey, ctx: CtxDep) -> GoldAccuracyOut:
    """Per person: gold items answered, how many rightly, the accuracy's 95 % Wilson interval, and whether
    it is surely under the model's `gold_threshold` (flagged)."""
    return gold.accuracy(ctx, who, handle)
