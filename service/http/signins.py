"""Sign-ins and refused sign-in attempts in the audit log (docs/deployment-team.md, "Security model").

A sign-in is the first accepted request of an ID token issued (`iat`) after the one the person last signed
in with (`people.signed_in_at`), not every request: one event in each namespace the person belongs to, whose
owners read it, or one in the service-wide stream (`service.store.audit.SERVICE`) for a person who belongs
to none. A refused attempt (a token that does not verify, is for another client, has expired, was signed
out, or names no usable person) names no namespace the service can trust: it goes to the service-wide
stream, which the operator reads (`python -m service audit`). An attacker controls how many of those come,
so each API process records at most MAX_REFUSED_SIGN_INS_PER_SOURCE a minute from one source address and
MAX_REFUSED_SIGN_INS from all; the rest are counted, and the next recorded attempt from that source says how
many went unrecorded before it.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime

from sqlalchemy import or_, update
from sqlalchemy.orm import Session

from core.contract import MAX_REFUSED_SIGN_INS, MAX_REFUSED_SIGN_INS_PER_SOURCE
from core.json_types import JsonObject
from service.context import Context
from service.store.api_keys import Principal
from service.store.audit import SERVICE, record
from service.store.db import transaction
from service.store.people import Identity, account_of
from service.store.schema import Person

#: Source addresses tracked in a minute: past it, a new source's attempts are counted nowhere (memory).
MAX_SOURCES = 10_000
#: The actor of an attempt whose token names no account the service can trust.
UNVERIFIED = "unverified"


class RefusalCap:
    """One per API process: how many refused attempts it recorded this minute, per source and in all."""

    def __init__(
        self, per_source: int = MAX_REFUSED_SIGN_INS_PER_SOURCE, total: int = MAX_REFUSED_SIGN_INS
    ) -> None:
        self.per_source, self.total = per_source, total
        self._lock = threading.Lock()
        self._minute = -1
        self._recorded: dict[str, int] = {}  # this minute's, per source
        self._unrecorded: dict[str, int] = {}  # per source, since its last recorded attempt

    def admit(self, source: str, now: float) -> int | None:
        """None: not to be recorded (counted instead); else how many attempts from `source` went
        unrecorded before this one."""
        with self._lock:
            if (minute := int(now // 60)) != self._minute:
                self._minute, self._recorded = minute, {}
            done = self._recorded.get(source, 0)
            if done >= self.per_source or sum(self._recorded.values()) >= self.total:
                if source in self._unrecorded or len(self._unrecorded) < MAX_SOURCES:
                    self._unrecorded[source] = self._unrecorded.get(source, 0) + 1
                return None
            if source not in self._recorded and len(self._recorded) >= MAX_SOURCES:
                return None
            self._recorded[source] = done + 1
            return self._unrecorded.pop(source, 0)


def refused(ctx: Context, cap: RefusalCap, source: str, reason: str, who: Identity | None) -> None:
    """Record a refused attempt in the service-wide stream, unless the cap says count it only. `who`: the
    account when the token verified (a signed-out or nameless person), None otherwise."""
    unrecorded = cap.admit(source, time.time())
    if unrecorded is None:
        return
    detail: JsonObject = {"reason": reason, "source": source}
    if unrecorded:
        detail["unrecorded_before"] = unrecorded
    if who is not None:
        detail["account"] = dict(account_of(who))
    actor = (who.email or who.subject)[:64] if who is not None else UNVERIFIED
    with transaction(ctx.sessions) as s:
        record(s, actor, "sign_in_refused", SERVICE, None, detail)


def is_new(row: Person, issued: datetime) -> bool:
    """Whether a token issued at `issued` is a sign-in the audit log has not seen."""
    return row.signed_in_at is None or issued > row.signed_in_at


def signed_in(session: Session, row: Person, who: Principal, issued: datetime, source: str) -> None:
    """In the transaction that admits the request: record the sign-in once per token, whichever of two
    concurrent first requests gets here first (the conditional update is the arbiter)."""
    won = session.execute(
        update(Person)
        .where(Person.id == row.id, or_(Person.signed_in_at.is_(None), Person.signed_in_at < issued))
        .values(signed_in_at=issued)
        .execution_options(synchronize_session=False)
    )
    if not getattr(won, "rowcount", 0):
        return
    detail: JsonObject = {"issued_at": issued.isoformat(), "source": source}
    for namespace in sorted(who.roles) or [SERVICE]:
        record(session, who, "signed_in", namespace, None, detail)
