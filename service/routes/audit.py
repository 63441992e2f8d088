"""A namespace's audit log: settles, withdrawn buffered labels, role changes (docs/api.md, "Audit log")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import AUDIT_PAGE, MAX_CURSOR_CHARS
from service.domain import audit
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.audit import AuditPage

router = APIRouter(tags=["audit"])


@router.get("/namespaces/{namespace}/audit", response_model=AuditPage, responses=errors(400, 403))
def list_audit(
    namespace: str,
    who: AuthoringKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=AUDIT_PAGE.maximum)] = AUDIT_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> AuditPage:
    """Newest first; the namespace's owners only."""
    return audit.list_audit(ctx, who, namespace, limit, cursor)
