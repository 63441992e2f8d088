"""Version history: activations and tag moves, written in the transaction that makes them, and read back."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.db import transaction
from service.domain.access import load_model
from service.keys import Principal
from service.schemas import EventKind, HistoryEvent, HistoryOut
from service.tables import Model, Version, VersionEvent, utcnow

if TYPE_CHECKING:
    from service.context import Context


def record(
    s: Session,
    model: Model,
    kind: str,
    version_no: int,
    *,
    tag: str | None = None,
    previous: int | None = None,
) -> None:
    s.add(
        VersionEvent(
            model_id=model.id,
            kind=kind,
            version_no=version_no,
            tag=tag,
            previous_version_no=previous,
            at=utcnow(),
        )
    )


def version_no_of(s: Session, version_id: int | None) -> int | None:
    if version_id is None:
        return None
    return s.scalar(select(Version.version_no).where(Version.id == version_id))


def events(s: Session, model: Model) -> list[VersionEvent]:
    """Oldest first (ids break ties between events of one transaction)."""
    query = select(VersionEvent).where(VersionEvent.model_id == model.id)
    return list(s.scalars(query.order_by(VersionEvent.at, VersionEvent.id)))


def get_history(ctx: Context, who: Principal, handle: str) -> HistoryOut:
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
