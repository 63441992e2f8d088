"""Fixtures: the real app on a temp data dir (hashing embedder, real SQLite, real Huey worker)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from harness.pgcluster import (
    PgClusterError,
    database_url_fixture,
    find_pg_bin,
    selected_backends,
)
from service.config.settings import Settings
from service.context import Context
from service.domain.needs import LOGGED, Checkpoints
from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.db import make_engine, migrate, transaction
from tests.deselect import deselect_marked
from tests.service.helpers import auth


def _migrate(url: str) -> None:
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()


def default_backends() -> tuple[str, ...]:
    """Both databases when the PostgreSQL binaries are installed (CI and these machines), else SQLite."""
    try:
        find_pg_bin()
    except PgClusterError:
        return ("sqlite",)
    return ("sqlite", "postgres")


# Every in-process test runs on SQLite and on PostgreSQL (one cluster per session, a database per test
# copied from a migrated template); SCORING_TEST_DATABASES=sqlite (or postgres) picks one.
database_url = database_url_fixture(backends=selected_backends(default=default_backends()), prepare=_migrate)

# A file marked `database_free` tests rules that stand beside the store (request parsing, auth errors, the
# guard, the embedders, Perspective's shapes): its PostgreSQL cases would run the SQLite cases' code again
# through the same SQLAlchemy statements, so a full run deselects them (a PostgreSQL-only run keeps them).
# Tests of what the database decides (cursors, ordering, locks, concurrent writes, the auth matrix's rows)
# stay on both.
DATABASE_FREE = "database_free"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "sqlite" in selected_backends(default=default_backends()):
        deselect_marked(config, items, DATABASE_FREE, "database_url", "postgres")


@dataclass
class Svc:
    app: FastAPI
    ctx: Context
    client: TestClient
    author: dict[str, str]  # authoring key for namespaces acme and lab
    scorer: dict[str, str]  # scoring key for acme
    other: dict[str, str]  # authoring key for namespace other
    publisher: dict[str, str]  # authoring key that owns the public catalog

    def key(self, namespaces: list[str], scope: str) -> dict[str, str]:
        with transaction(self.ctx.sessions) as s:
            return auth(create_key(s, namespaces, scope))


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    base: dict[str, object] = {
        "embedder": "hashing",
        "heartbeat_interval_s": 0.5,
        "recovery_interval_s": 3600.0,
        "retrain_buffer": 3,
        # The rate limits are the defaults users get; a test of a flood lowers them, and one that needs them
        # off says why where it turns them off.
    }
    base.update(overrides)
    return Settings.from_env(data_dir=data_dir, **base)


@contextmanager
def running(data_dir: Path, **overrides: object) -> Iterator[Svc]:
    """The app on `data_dir` with the test settings and `overrides`; `checkpoints=`: a fault test's
    (harness/faults.py)."""
    checkpoints = cast(Checkpoints, overrides.pop("checkpoints", LOGGED))
    settings = make_settings(data_dir, **overrides)
    app = create_app(settings, context=Context.build(settings, checkpoints))
    ctx: Context = app.state.ctx
    with TestClient(app, raise_server_exceptions=False) as client:
        svc = Svc(app, ctx, client, {}, {}, {}, {})
        svc.author = svc.key(["acme", "lab"], "authoring")
        svc.scorer = svc.key(["acme"], "scoring")
        svc.other = svc.key(["other"], "authoring")
        svc.publisher = svc.key(["public"], "authoring")
        yield svc


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
