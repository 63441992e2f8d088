"""Is the worker of a running run still alive? It holds a lock on the run while it executes it, and the lock
goes the moment its process dies, `kill -9` included: a file lock (`flock`, released by the kernel) next to a
SQLite database, a session advisory lock (released by PostgreSQL when the connection drops) on PostgreSQL.

The recovery sweep re-queues a running run whose lock is free at once instead of waiting for its heartbeat to
go stale. The heartbeat stays the fallback: a host cut off from the network keeps its PostgreSQL connection,
and so its lock, until TCP gives up. A lock is taken before the claim and let go only after the run's last
write, so a running run whose lock is free has no worker. Collisions (two runs, one advisory key) only make a
dead run look alive, i.e. recovered by the heartbeat timeout as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

ADVISORY_CLASS = 72_310_462  # the first key of every run lock (MIGRATION_LOCK_ID + 1: this project's locks)


class RunLocks(Protocol):
    def hold(self, run_id: str) -> contextlib.AbstractContextManager[bool]:
        """Hold the run's lock for the block; yields False (holding nothing) if another holder has it."""
        ...

    def held(self, run_id: str) -> bool:
        """Whether any process (this one included) holds the run's lock."""
        ...


class FileRunLocks:
    """`flock` on `<directory>/<run id>.lock`: one directory per SQLite database, shared by its processes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def _path(self, run_id: str) -> Path:
        return self.directory / f"{run_id}.lock"

    @contextlib.contextmanager
    def hold(self, run_id: str) -> Iterator[bool]:
        path = self._path(run_id)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # while still locked: a later checker finds no file, i.e. no holder
        finally:
            os.close(fd)  # releases the lock

    def held(self, run_id: str) -> bool:
        try:
            fd = os.open(self._path(run_id), os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)


class AdvisoryRunLocks:
    """A session advisory lock (ADVISORY_CLASS, key of the run id) on a connection kept for the run."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @staticmethod
    def key(run_id: str) -> int:
        return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4], "big") & 0x7FFFFFFF

    @contextlib.contextmanager
    def hold(self, run_id: str) -> Iterator[bool]:
        args = {"c": ADVISORY_CLASS, "k": self.key(run_id)}
        with self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")  # no transaction held for the run
            if not conn.execute(text("SELECT pg_try_advisory_lock(:c, :k)"), args).scalar_one():
                yield False
                return
            try:
                yield True
            finally:
                with contextlib.suppress(Exception):  # a dropped connection has let go already
                    conn.execute(text("SELECT pg_advisory_unlock(:c, :k)"), args)

    def held(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            return bool(
                conn.execute(
                    text(
                        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
                        " AND classid = :c AND objid = :k AND objsubid = 2)"
                    ),
                    {"c": ADVISORY_CLASS, "k": self.key(run_id)},
                ).scalar_one()
            )


def run_locks_for(engine: Engine) -> RunLocks:
    if engine.dialect.name == "postgresql":
        return AdvisoryRunLocks(engine)
    database = make_url(str(engine.url)).database
    return FileRunLocks(Path(f"{database}-runlocks"))
