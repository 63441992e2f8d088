"""When a person's sign-in ends: sign-out, an idle timeout, a longest session.

An ID token cannot be recalled from a browser, so the service keeps, per account, a watermark
(`people.signed_out_at`): a token issued (`iat`) at or before it is refused. Signing out sets it to now,
which ends the person's sign-in in every tab and browser at once, copied cookies included. The idle
timeout sets it too: at the first request after more than `idle_s` without one, the watermark moves to the
last request seen (plus the minute `last_seen_at` is kept to), so only a token from a new sign-in gets
through. `max_s` bounds a token's age whatever its `exp` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from service.store.schema import Person

#: `last_seen_at` is written at most this often per person: most requests cost no write.
SEEN_EVERY = timedelta(seconds=60)
SIGNED_OUT = "You signed out (or were signed out) of this workbench: sign in again."
IDLE = "Your sign-in ended after {hours:g} h without activity: sign in again."
TOO_OLD = "Your sign-in is older than {hours:g} h: sign in again."


@dataclass(frozen=True)
class SessionRules:
    idle_s: int  # 0: no idle timeout
    max_s: int  # 0: a token lives until its `exp`


def issued_at(iat: object) -> datetime:
    return datetime.fromtimestamp(float(iat), UTC)  # type: ignore[arg-type]  # verified numeric by joserfc


def _idle_mark(row: Person, now: datetime, rules: SessionRules) -> datetime | None:
    """The watermark an idle gap before this request sets (None: no gap)."""
    seen = row.last_seen_at
    if rules.idle_s and seen is not None and now - seen > timedelta(seconds=rules.idle_s):
        return seen + SEEN_EVERY
    return None


def check(row: Person, issued: datetime, now: datetime, rules: SessionRules) -> tuple[str | None, bool]:
    """On the read path: (why the token is refused, or None; whether the row must be written first, which
    `admit` then decides in a write transaction)."""
    if rules.max_s and now - issued > timedelta(seconds=rules.max_s):
        return TOO_OLD.format(hours=rules.max_s / 3600), False
    if _idle_mark(row, now, rules) is not None:
        return None, True
    if row.signed_out_at is not None and issued <= row.signed_out_at:
        return SIGNED_OUT, False
    return None, row.last_seen_at is None or now - row.last_seen_at >= SEEN_EVERY


def only_seen_due(row: Person, now: datetime, rules: SessionRules) -> bool:
    """Whether the one write a request of an admitted token owes is the minute's `last_seen_at` (no idle gap
    to close): a write that may be skipped when the disk is full, at the cost of an idle timeout counted
    from the last request recorded."""
    return _idle_mark(row, now, rules) is None


def admit(row: Person, issued: datetime, now: datetime, rules: SessionRules) -> str | None:
    """In a write transaction: move the watermark past an idle gap, then refuse (the reason) or record the
    request as the person's last."""
    if rules.max_s and now - issued > timedelta(seconds=rules.max_s):
        return TOO_OLD.format(hours=rules.max_s / 3600)
    mark = _idle_mark(row, now, rules)
    if mark is not None and (row.signed_out_at is None or mark > row.signed_out_at):
        row.signed_out_at = mark
    if row.signed_out_at is not None and issued <= row.signed_out_at:
        return IDLE.format(hours=rules.idle_s / 3600) if mark is not None else SIGNED_OUT
    row.last_seen_at = now
    return None


def sign_out(row: Person, now: datetime) -> datetime:
    """End every sign-in of the person so far: each token issued until now is refused from now on."""
    if row.signed_out_at is None or now > row.signed_out_at:
        row.signed_out_at = now
    return row.signed_out_at
