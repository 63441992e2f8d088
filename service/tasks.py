"""Huey wiring. The task message carries only the run id; the runs table holds everything else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from huey import Huey, SqliteHuey

from service.settings import Settings

TASK_NAME = "service.execute_run"


def make_huey(settings: Settings) -> Huey:
    """The queue backend for a database URL: SQLite file in the data dir, or SQL tables on PostgreSQL."""
    url = settings.database_url
    if url.startswith("sqlite"):
        return SqliteHuey(name="scoring", filename=str(settings.data_dir / "huey.sqlite"), results=False)
    if url.startswith(("postgresql", "postgres")):
        from huey.contrib.sql_huey import SqlHuey

        # peewee's db_url speaks "postgresql://"; drop SQLAlchemy's "+driver" suffix.
        scheme, rest = url.split("://", 1)
        return SqlHuey(name="scoring", database=f"{scheme.split('+')[0]}://{rest}", results=False)
    raise ValueError(f"no Huey backend for database URL {url!r}")


class Queue:
    """Registers the one task on a Huey instance and enqueues run ids."""

    def __init__(self, huey: Huey, execute: Callable[[str], Any]) -> None:
        self.huey = huey

        @huey.task(name=TASK_NAME)
        def execute_run(run_id: str) -> None:
            execute(run_id)

        self._task = execute_run

    def enqueue(self, run_id: str) -> None:
        self._task(run_id)
