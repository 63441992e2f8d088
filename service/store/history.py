"""Version history records: activations and tag moves, written in the transaction that makes them (by the
domain and by training runs), and read back oldest first."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.schema import Model, Version, VersionEvent, utcnow


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
