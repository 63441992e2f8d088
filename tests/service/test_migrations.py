"""The Alembic revision builds exactly the schema the ORM declares, and re-running it is a no-op."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from service.db import make_engine, migrate
from service.tables import Base


def test_migration_matches_metadata(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'm.sqlite'}")
    migrate(engine)
    migrate(engine)  # idempotent on start
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert set(inspect(engine).get_table_names()) >= {
        "models",
        "traits",
        "samples",
        "versions",
        "tags",
        "runs",
        "api_keys",
        "feedback_labels",
        "alembic_version",
    }
    engine.dispose()
