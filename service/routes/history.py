"""GET /models/{h}/history: when each version became active and when each tag pointed where."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, cast

from fastapi import APIRouter
from pydantic import BaseModel

from service import history
from service.auth import AnyKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.routes.common import errors

EventKind = Literal["activated", "tagged", "untagged", "reopened"]

router = APIRouter(tags=["versions"])


class HistoryEvent(BaseModel):
    at: datetime
    kind: EventKind
    version_no: int
    tag: str | None = None
    previous_version_no: int | None = None


class HistoryOut(BaseModel):
    handle: str
    events: list[HistoryEvent]


@router.get("/models/{handle}/history", response_model=HistoryOut, responses=errors(404))
def get_history(handle: str, who: AnyKey, ctx: CtxDep) -> HistoryOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        rows = history.events(s, model)
        return HistoryOut(
            handle=model.handle,
            events=[
                HistoryEvent(
                    at=e.at,
                    kind=cast(EventKind, e.kind),
                    version_no=e.version_no,
                    tag=e.tag,
                    previous_version_no=e.previous_version_no,
                )
                for e in rows
            ],
        )
