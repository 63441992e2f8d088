"""The history resource: a model's activations and tag moves, oldest first (service/store/history.py writes
them)."""

from __future__ import annotations

from typing import cast

from service.domain.access import load_model
from service.domain.needs import Databases
from service.schemas.history import EventKind, HistoryEvent, HistoryOut
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.history import events


def get_history(ctx: Databases, who: Principal, handle: str) -> HistoryOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        rows = events(s, model)
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
