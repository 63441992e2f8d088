"""A namespace's audit log, newest first (written by service/store/audit.py's `record`)."""

from __future__ import annotations

from sqlalchemy import select

from service.domain.access import require_role
from service.domain.needs import Resources
from service.errors import ApiError
from service.schemas.audit import AuditEventOut, AuditPage
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.schema import AuditEvent


def list_audit(ctx: Resources, who: Principal, namespace: str, limit: int, cursor: str | None) -> AuditPage:
    """Owners only: who settled, withdrew and changed roles is the namespace's management's to read."""
    if not who.owns(namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {namespace!r}.")
    require_role(who, "manage", namespace)
    scope = f"audit|{namespace}"
    before = ctx.cursors.position(cursor, scope)  # keyset, newest first: ids below the last page's
    with transaction(ctx.reads) as s:
        q = select(AuditEvent).where(AuditEvent.namespace == namespace)
        if before is not None:
            q = q.where(AuditEvent.id < before)
        rows = s.scalars(q.order_by(AuditEvent.id.desc()).limit(limit + 1)).all()
        page = rows[:limit]
        items = [
            AuditEventOut(id=r.id, at=r.at, kind=r.kind, actor=r.actor, handle=r.handle, detail=r.detail)
            for r in page
        ]
    next_cursor = ctx.cursors.encode(scope, page[-1].id) if len(rows) > limit else None
    return AuditPage(namespace=namespace, items=items, limit=limit, next_cursor=next_cursor)
