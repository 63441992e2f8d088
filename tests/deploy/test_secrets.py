"""A fleet's shared settings: the cursor secret must be a real one (a placeholder or a short one stops the
process at start, saying why), and a database password may hold any character."""

from __future__ import annotations

import argparse
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from harness.pgcluster import PgCluster
from service.commands.serving import serve_settings
from service.config.settings import Settings
from service.runs.queue import make_huey
from service.store.db import make_engine
from tests.support.deploy import clean_env, service

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

PLACEHOLDER = "change-me-to-a-long-random-hex-string"  # what deploy/docker-compose.yml used to default to
SHORT = "short-but-random-3f9a1c"
AWKWARD_PASSWORD = "p@ss/w:rd#?%25&x y"


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    name = f"deploy_{uuid.uuid4().hex[:12]}"
    url = pg_cluster.create_database(name)
    yield url
    pg_cluster.drop_database(name)


@pytest.mark.postgres
# Each command once (each builds its settings and reports the refusal itself), and each kind of weak secret:
# which kind it is, `weak_secret` says alike for every command (each case is a process start, ~4 CPU-s).
# `serve --no-worker` is an API of a fleet; `serve` with its worker child is one process (below).
@pytest.mark.parametrize(
    ("command", "secret"),
    [(["serve", "--no-worker", "--port", "0"], SHORT), (["worker"], PLACEHOLDER)],
    ids=["api-short", "worker-placeholder"],
)
def test_postgres_refuses_a_placeholder_or_short_cursor_secret(
    pg_url: str, tmp_path: Path, secret: str, command: list[str]
) -> None:
    env = clean_env(SCORING_DATABASE_URL=pg_url, SCORING_CURSOR_SECRET=secret, SCORING_DATA_DIR=str(tmp_path))
    proc = service(*command, env=env)
    assert proc.returncode != 0
    assert "error: SCORING_CURSOR_SECRET" in proc.stderr and "Traceback" not in proc.stderr
    why = "looks like a placeholder" if secret == PLACEHOLDER else "characters long"
    assert why in proc.stderr and "secrets.token_hex(32)" in proc.stderr
    assert "ready" not in proc.stdout


def test_serve_with_its_worker_child_on_sqlite_keeps_any_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make serve`'s shape: one API process whose worker is its child process, nothing else verifying its
    cursors. (Built in this process: starting `serve` would only add a process start.)"""
    monkeypatch.setenv("SCORING_CURSOR_SECRET", PLACEHOLDER)
    monkeypatch.delenv("SCORING_DATABASE_URL", raising=False)
    args = argparse.Namespace(
        data_dir=str(tmp_path), database_url=None, queue_url=None, embedder=None, scoring_threads=None,
        no_worker=False, in_process_worker=False,
    )  # fmt: skip
    assert serve_settings(args).run_worker is False  # its runs go to the child
    with pytest.raises(SystemExit, match="looks like a placeholder"):  # an API of a fleet: refused
        serve_settings(argparse.Namespace(**{**vars(args), "no_worker": True}))


def test_an_api_fleet_on_sqlite_refuses_a_placeholder_too(tmp_path: Path) -> None:
    env = clean_env(SCORING_CURSOR_SECRET=PLACEHOLDER, SCORING_DATA_DIR=str(tmp_path))
    proc = service("serve", "--no-worker", "--port", "0", env=env)
    assert proc.returncode != 0 and "looks like a placeholder" in proc.stderr


def test_one_process_on_sqlite_keeps_any_secret(tmp_path: Path) -> None:
    """The single-user shape (`make serve`): nothing else verifies its cursors, so nothing is refused."""
    env = clean_env(SCORING_CURSOR_SECRET="dev", SCORING_DATA_DIR=str(tmp_path))
    proc = service("migrate", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Database schema at revision" in proc.stdout


@pytest.mark.postgres
def test_an_awkward_password_reaches_the_database_and_the_queue(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCORING_DATABASE_PASSWORD goes into the URL percent-encoded: `@ / : # ? %` break neither the engine's
    URL nor the queue's (the test cluster trusts loopback, so any password connects once the URL parses)."""
    env = clean_env(
        SCORING_DATABASE_URL=pg_url,
        SCORING_DATABASE_PASSWORD=AWKWARD_PASSWORD,
        SCORING_CURSOR_SECRET=secrets.token_hex(32),
        SCORING_DATA_DIR=str(tmp_path),
    )
    proc = service("migrate", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Database schema at revision" in proc.stdout

    monkeypatch.setenv("SCORING_DATABASE_PASSWORD", AWKWARD_PASSWORD)
    monkeypatch.setenv("SCORING_CURSOR_SECRET", secrets.token_hex(32))
    settings = Settings.from_env(database_url=pg_url, data_dir=str(tmp_path))
    engine = make_engine(settings.database_url)
    try:
        assert engine.url.password == AWKWARD_PASSWORD
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
    finally:
        engine.dispose()
    huey = make_huey(settings)
    try:
        assert huey.storage.database.connect_params["password"] == AWKWARD_PASSWORD
        assert huey.pending_count() == 0  # a query through the queue's own connection
    finally:
        huey.storage.database.close()
