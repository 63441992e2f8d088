"""Huey wiring. The task message carries only the run id; the runs table holds everything else."""

from __future__ import annotations

from collections.abc import Callable

from huey import Huey, RedisHuey, SqliteHuey

from service.config.settings import Settings
from service.store.db import MIGRATION_LOCK_ID

TASK_NAME = "service.execute_run"
SHARD_TASK_NAME = "service.embed_shard"  # one shard of a training's embedding (service/runs/shards.py)


def make_huey(settings: Settings) -> Huey:
    """The queue backend: Redis when a queue URL is set, else in the database (a SQLite file in the data dir,
    or SQL tables on PostgreSQL)."""
    if settings.queue_url:
        return RedisHuey(name="scoring", url=settings.queue_url, results=False)
    url = settings.database_url
    if url.startswith("sqlite"):
        return SqliteHuey(name="scoring", filename=str(settings.data_dir / "huey.sqlite"), results=False)
    if url.startswith(("postgresql", "postgres")):
        # peewee's db_url speaks "postgresql://"; drop SQLAlchemy's "+driver" suffix.
        scheme, rest = url.split("://", 1)
        return _sql_huey(f"{scheme.split('+')[0]}://{rest}")
    raise ValueError(f"no Huey backend for database URL {url!r}")


def _sql_huey(url: str) -> Huey:
    """SqlHuey on PostgreSQL, built under the migration lock.

    SqlHuey creates its tables when constructed; processes starting together on a new database
    would race in CREATE TABLE IF NOT EXISTS (a unique violation in pg_type), so they take turns.
    """
    import psycopg2
    from huey.contrib.sql_huey import SqlHuey
    from playhouse.db_url import connect

    lock = psycopg2.connect(url)
    try:
        with lock.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_ID,))
        # A password may be percent-encoded in the URL (libpq decodes it; peewee only when asked).
        database = connect(url, unquote_password=True, unquote_user=True)
        return SqlHuey(name="scoring", database=database, results=False)
    finally:
        lock.close()  # ends the session, which releases the lock


class Queue:
    """Registers the tasks on a Huey instance: runs (by id) and shards of a run's embedding."""

    def __init__(
        self, huey: Huey, execute: Callable[[str], object], embed_shard: Callable[[str, int], object]
    ) -> None:
        self.huey = huey

        def execute_run(run_id: str) -> None:
            execute(run_id)

        def embed(run_id: str, shard_no: int) -> None:
            embed_shard(run_id, shard_no)

        # Huey's task decorator (untyped) returns its TaskWrapper: calling it enqueues a message.
        self._task: Callable[[str], object] = huey.task(name=TASK_NAME)(execute_run)
        self._shard_task: Callable[[str, int], object] = huey.task(name=SHARD_TASK_NAME)(embed)

    def enqueue(self, run_id: str) -> None:
        self._task(run_id)

    def enqueue_shard(self, run_id: str, shard_no: int) -> None:
        self._shard_task(run_id, shard_no)

    def pending_runs(self) -> set[str]:
        """The run ids whose message waits in the queue (read in full: for the sweep of lost messages)."""
        return {str(task.args[0]) for task in self.huey.pending() if task.name == TASK_NAME and task.args}
