"""Is the worker of a running run still alive? The one rule of liveness (`holder_gone`), for every path that
would take a run (or a shard of one) from its worker: the recovery sweep, the sweep that enqueues a queued run
again, a training's coordinator taking back a shard.

A worker holds a lock on the run while it executes it, from before the claim until after the run's last
write, and the lock goes when its process does, `kill -9` included: a file lock (`flock`, released by the
kernel only when its holder closes it or exits) next to a SQLite database, a session advisory lock (released
by PostgreSQL when the connection drops) on PostgreSQL. So liveness is the worker's process, never its speed:
a run whose lock is held is never taken, however old its heartbeat (a worker starved by a busy machine, or
one waiting on a graph build, beats late and is still alive).

- A free file lock proves the holder's process has exited (one host: the lock file is on its disk): the run
  is taken at once.
- A free advisory lock proves only that its connection is gone: the worker's process may live on (a database
  restart, a network cut that TCP ended). Its run is taken once the heartbeat is older than the timeout too; a
  lock connection asks PostgreSQL to probe its peer (`KEEPALIVE`), so a host that vanished lets go of its
  locks within about a minute instead of the kernel's two hours.

Collisions (two runs, one advisory key) only make a dead run look alive until the other run ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from service.store.schema import utcnow

ADVISORY_CLASS = 72_310_462  # the first key of every run lock (MIGRATION_LOCK_ID + 1: this project's locks)
# PostgreSQL's probes of a lock connection's peer (seconds idle, seconds between probes, probes): the kernel
# of a live host answers them however busy it is; a vanished one's connection, and its locks, go in ~1 min.
KEEPALIVE = (30, 10, 3)


class RunLocks(Protocol):
    # Whether a free lock proves that its last holder's process has exited (not only its connection).
    proves_exit: bool

    def hold(self, run_id: str) -> contextlib.AbstractContextManager[bool]:
        """Hold the run's lock for the block; yields False (holding nothing) if another holder has it."""
        ...

    def held(self, run_id: str) -> bool:
        """Whether any process (this one included) holds the run's lock."""
        ...


def holder_gone(locks: RunLocks, key: str, heartbeat_at: datetime | None, timeout_s: float) -> bool:
    """Whether the worker holding `key` (a run id, or a shard's `shard_key`) is gone: its lock is free and,
    where a free lock does not prove its process exited, its heartbeat is older than `timeout_s` as well."""
    if locks.held(key):
        return False
    if locks.proves_exit:
        return True
    return heartbeat_at is None or heartbeat_at < utcnow() - timedelta(seconds=timeout_s)


def shard_key(run_id: str, shard_no: int) -> str:
    """The lock a worker holds while it embeds a shard of a run (service/runs/shards.py)."""
    return f"{run_id}.shard{shard_no}"


class FileRunLocks:
    """`flock` on `<directory>/<run id>.lock`: one directory per SQLite database, shared by its processes."""

    proves_exit = True

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
            if not _still_named(fd, path):
                # The holder before us unlinked the file between our open and our lock: ours is a lock on a
                # file nobody else sees (a checker would find no holder), so count the run as taken.
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


def _still_named(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


class AdvisoryRunLocks:
    """A session advisory lock (ADVISORY_CLASS, key of the run id) on a connection kept for the run."""

    proves_exit = False

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
            for name, value in zip(("idle", "interval", "count"), KEEPALIVE, strict=True):
                conn.execute(text(f"SET tcp_keepalives_{name} = {value}"))
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


class NoLocks:
    """No lock at all: a holder is never seen, so liveness is the heartbeat's alone (a coordinator of shards
    built without the service's locks, in a test)."""

    proves_exit = False

    @contextlib.contextmanager
    def hold(self, run_id: str) -> Iterator[bool]:
        yield True

    def held(self, run_id: str) -> bool:
        return False


def run_locks_for(engine: Engine) -> RunLocks:
    if engine.dialect.name == "postgresql":
        return AdvisoryRunLocks(engine)
    database = make_url(str(engine.url)).database
    return FileRunLocks(Path(f"{database}-runlocks"))
