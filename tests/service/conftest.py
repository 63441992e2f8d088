"""Fixtures: the real app on a temp data dir (hashing embedder, real SQLite, real Huey worker); the app
and its settings are tests/support/service.py's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.pgcluster import database_url_fixture, selected_backends
from tests.support.deselect import deselect_marked
from tests.support.service import DATABASE_FREE, Svc, default_backends, prepare_template, running

# Every in-process test runs on SQLite and on PostgreSQL (one cluster per session, a database per test
# copied from a template, migrated and holding the four keys); SCORING_TEST_DATABASES=sqlite (or postgres)
# picks one.
database_url = database_url_fixture(
    backends=selected_backends(default=default_backends()), prepare=prepare_template
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "sqlite" in selected_backends(default=default_backends()):
        deselect_marked(config, items, DATABASE_FREE, "database_url", "postgres")


@pytest.fixture
def svc(tmp_path: Path, database_url: str) -> Iterator[Svc]:
    """The app with its in-process worker running."""
    with running(tmp_path, database_url=database_url) as s:
        yield s


@pytest.fixture
def idle_svc(tmp_path: Path, database_url: str) -> Iterator[Svc]:
    """The app without a worker: runs stay queued until a test executes them."""
    with running(tmp_path, run_worker=False, database_url=database_url) as s:
        yield s
