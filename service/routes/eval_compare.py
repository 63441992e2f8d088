"""Two versions side by side on the evaluation set: paired metric differences, reliability, disagreements."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import DISAGREEMENTS, MAX_VERSION_REF_CHARS
from service.domain import eval_compare
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.eval_compare import EvalCompareOut

router = APIRouter(tags=["evaluation"])
Ref = Annotated[str, Query(min_length=1, max_length=MAX_VERSION_REF_CHARS, description="`vN` or a tag")]


@router.get(
    "/models/{handle}/evaluation/compare", response_model=EvalCompareOut, responses=errors(403, 404, 409)
)
def compare_evaluations(
    handle: str,
    a: Ref,
    b: Ref,
    who: AuthoringKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=DISAGREEMENTS.maximum, description="disagreements returned")] = (
        DISAGREEMENTS.default
    ),
) -> EvalCompareOut:
    return eval_compare.compare_evaluations(ctx, who, handle, a, b, limit)
