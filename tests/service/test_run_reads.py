"""A run reads its inputs (a training's samples and votes, an evaluation's items, a discovery's samples) in a
read transaction: on SQLite it takes no write lock, so reading a big model holds up no import, heartbeat or
claim (the million-sample benchmark's training held the lock for 10 s reading its samples before)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from service.config.settings import Settings
from service.domain.embedding import Embedders
from service.runs.attempt import Attempt
from service.runs.heartbeat import Heartbeat
from service.store.db import make_engine, make_session_factory, migrate, transaction
from service.store.schema import SampleRow


def test_a_runs_reads_wait_for_no_writer_and_hold_up_none(tmp_path: Path) -> None:
    path = tmp_path / "scoring.sqlite"
    engine = make_engine(f"sqlite:///{path}", lock_timeout_s=0.3)
    migrate(engine)
    attempt = Attempt(
        run_id="run_x",
        number=1,
        handle="acme.big",
        settings=cast(Settings, None),  # not used by the sessions
        sessions=make_session_factory(engine),
        embedders=cast(Embedders, None),
        heartbeat=cast(Heartbeat, None),
    )
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # an import's batch holds the write lock
        with transaction(attempt.reads) as s:  # the run's read goes ahead
            assert s.scalar(select(func.count(SampleRow.id))) == 0
            # ... and while it reads, the writer can still commit (no lock of the read's holds it up).
            other.execute("COMMIT")
            other.execute("BEGIN IMMEDIATE")
        with pytest.raises(OperationalError, match="locked"), transaction(attempt.sessions) as s:
            s.scalar(select(func.count(SampleRow.id)))  # a write session waits for the lock, then gives up
    finally:
        other.execute("ROLLBACK")
        other.close()
        engine.dispose()
