"""Token buckets in the database: every API process of a fleet takes from the same buckets.

One row per bucket (`rate_buckets`): the tokens left at a moment. Taking one locks the row (PostgreSQL:
SELECT … FOR UPDATE; SQLite: the write transaction holds the database's lock), tops it up for the time
since, and takes a token when there is one. `now` is an argument, so a test moves time itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from service.store.schema import RateBucket


@dataclass(frozen=True)
class Rate:
    """`per_s` tokens a second, at most `burst` kept: `burst` requests at once, then `per_s` a second."""

    per_s: float
    burst: int


def take(s: Session, key: str, rate: Rate, now: float) -> float:
    """Take a token from bucket `key` (a new bucket is full); 0.0 when taken, else the seconds until there
    is one (nothing taken)."""
    row = s.scalar(select(RateBucket).where(RateBucket.key == key).with_for_update())
    if row is None:
        insert = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
        s.execute(
            insert(RateBucket).values(key=key, tokens=float(rate.burst), at=now).on_conflict_do_nothing()
        )
        row = s.scalar(select(RateBucket).where(RateBucket.key == key).with_for_update())
        assert row is not None
    # A clock behind another process's (a fleet's machines) never takes tokens away.
    tokens = min(float(rate.burst), row.tokens + max(now - row.at, 0.0) * rate.per_s)
    if tokens < 1.0:
        return (1.0 - tokens) / rate.per_s
    row.tokens, row.at = tokens - 1.0, max(now, row.at)
    return 0.0
