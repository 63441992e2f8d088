"""The session rules of service/store/sessions.py as properties over generated histories: whatever order of
requests, sign-outs and idle gaps, a token issued at or before a sign-out, or before an idle gap, is never
admitted again, and a token from after the last sign-out, used without an idle gap, always is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from service.store.schema import Person
from service.store.sessions import SessionRules, admit, check, sign_out

RULES = SessionRules(idle_s=8 * 3600, max_s=12 * 3600)
START = datetime(2026, 1, 1, tzinfo=UTC)

# One step: a wait (seconds), then either a sign-out or a request with a token issued `age` seconds ago.
steps = st.lists(
    st.tuples(st.integers(0, 10 * 3600), st.booleans(), st.integers(0, 13 * 3600)), min_size=1, max_size=25
)


def request(row: Person, issued: datetime, now: datetime) -> bool:
    """What the service does with one request: the read path's check, then (if it asks) the write path."""
    refused, write = check(row, issued, now, RULES)
    if refused is not None:
        return False
    if write:
        return admit(row, issued, now, RULES) is None
    return True


@settings(max_examples=200, deadline=None)
@given(steps)
def test_no_token_from_before_a_sign_out_is_ever_admitted(history: list[tuple[int, bool, int]]) -> None:
    row = Person(issuer="https://id.example", subject="alice")
    now, signed_out = START, None
    last_admitted: datetime | None = None
    idle_before: datetime | None = None  # tokens issued by then were left idle too long
    for wait, signs_out, age in history:
        now += timedelta(seconds=wait)
        if last_admitted is not None and now - last_admitted > timedelta(seconds=RULES.idle_s):
            idle_before = max(idle_before or last_admitted, last_admitted)
        if signs_out:
            signed_out = sign_out(row, now)
            continue
        issued = now - timedelta(seconds=age)
        admitted = request(row, issued, now)
        if signed_out is not None and issued <= signed_out:
            assert not admitted, "a token issued before the sign-out got through"
        if idle_before is not None and issued <= idle_before:
            assert not admitted, "a token from before an idle gap got through"
        if admitted:
            assert now - issued <= timedelta(seconds=RULES.max_s)
            last_admitted = now


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3600), min_size=1, max_size=25))
def test_a_fresh_sign_in_used_without_idle_gaps_is_always_admitted(waits: list[int]) -> None:
    row = Person(issuer="https://id.example", subject="alice")
    sign_out(row, START)  # signed out earlier: a new sign-in follows
    issued = START + timedelta(seconds=1)
    now = issued
    for wait in waits:
        now += timedelta(seconds=wait)
        if now - issued > timedelta(seconds=RULES.max_s):
            break
        assert request(row, issued, now)
