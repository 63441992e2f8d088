"""A namespace's audit log (`routes/audit.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.contract import AuditKind
from core.json_types import JsonObject


class AuditEventOut(BaseModel):
    id: int
    at: datetime
    kind: AuditKind = Field(
        description="`settled` (a settling vote stored), `unsettled` (one deleted), `feedback_withdrawn` "
        "(a buffered label withdrawn), `role_changed` (a key's role given or changed)"
    )
    actor: str = Field(
        description="Who did it: the caller's annotator name, or `operator` (the command line)"
    )
    handle: str | None = Field(description="The model it concerns; null for a role change")
    detail: JsonObject = Field(
        description="What: `trait`, `sample_id` or `feedback_id`, `quality` and the vote's `annotator` "
        "(settles and withdrawals); `key`, `name`, `from` and `to` (role changes). Never a text."
    )


class AuditPage(BaseModel):
    namespace: str
    items: list[AuditEventOut]
    limit: int
    next_cursor: str | None
