"""The Alembic revision builds exactly the schema the ORM declares, and re-running it is a no-op."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from service.db import make_engine, migrate
from service.tables import Base
from tests.support.pgcluster import database_url_fixture, selected_backends

# An empty database (no prepare step), so the migration itself is what builds the schema.
pg_or_sqlite_empty = database_url_fixture(
    backends=selected_backends(default=("sqlite",)), name="pg_or_sqlite_empty"
)


def test_migration_matches_metadata(pg_or_sqlite_empty: str) -> None:
    engine = make_engine(pg_or_sqlite_empty)
    migrate(engine)
    migrate(engine)  # idempotent on start
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        if engine.dialect.name == "sqlite":
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
