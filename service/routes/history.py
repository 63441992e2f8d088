"""GET /models/{h}/history: when each version became active and when each tag pointed where."""

from __future__ import annotations

from fastapi import APIRouter

from service.domain import history
from service.http.auth import AnyKey, CtxDep
from service.routes.common import errors
from service.schemas.history import HistoryOut

router = APIRouter(tags=["versions"])


@router.get("/models/{handle}/history", response_model=HistoryOut, responses=errors(404))
def get_history(handle: str, who: AnyKey, ctx: CtxDep) -> HistoryOut:
    return history.get_history(ctx, who, handle)
