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
        "(a buffered label withdrawn), `role_changed` (a key's role given or changed), `vote_edited`, "
        "`vote_deleted`, `model_deleted`, `pool_deleted`, `key_created`, `key_revoked`, `signed_in` (a "
        "member's sign-in: the first request of a newer token), `signed_out`, `model_created`, "
        "`model_changed`, `model_reopened`, `model_purged`, `traits_changed`, `samples_imported`, "
        "`pool_added`, `evaluation_set_changed`, `run_started` (asked for, or started by buffered labels), "
        "`run_cancelled`, `tag_moved`, `threshold_changed`, `note_deleted`, `access_refused` (a 403); "
        "`sign_in_refused` is in the service-wide stream only (docs/api.md, Audit log)"
    )
    actor: str = Field(
        description="Who did it: the caller's annotator name, or `operator` (the command line)"
    )
    handle: str | None = Field(description="The model it concerns; null for a role change")
    detail: JsonObject = Field(
        description="What: `trait`, `sample_id` or `feedback_id`, `quality` and the vote's `annotator` "
        "(settles, withdrawals, vote deletes; a vote edit's `before` and `after`); `key`, `name`, `from` and "
        "`to` (role changes); `key`, `name`, `expires_at` (keys); `pool_text_id` or `deleted` (pool "
        "deletes). Never a text."
    )


class AuditPage(BaseModel):
    namespace: str
    items: list[AuditEventOut]
    limit: int
    next_cursor: str | None
