"""The throwaway PostgreSQL cluster used by the PostgreSQL test runs and the load benchmark."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import peewee
import psycopg2
import pytest
import sqlalchemy as sa
from playhouse.db_url import connect as peewee_connect

from harness.pgcluster import (
    PgCluster,
    PgClusterError,
    TemplateCopies,
    database_url_fixture,
    pg_database_fixture,
    run_as_prefix,
    selected_backends,
)
from harness.waiting import wait_until

pytestmark = pytest.mark.postgres

PREPARED: list[str] = []


def _prepare(url: str) -> None:
    """Stands in for "apply the migrations": a table and a row, in WAL mode on SQLite like the service."""
    PREPARED.append(url.split(":", 1)[0])
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        if url.startswith("sqlite"):
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        conn.execute(sa.text("CREATE TABLE runs (id integer PRIMARY KEY, note text)"))
        conn.execute(sa.text("INSERT INTO runs (id, note) VALUES (1, 'from prepare')"))
    # Deliberately not disposed: the fixture must cope with a session left open on the template.
    ENGINES.append(engine)


ENGINES: list[sa.Engine] = []

pg_database = pg_database_fixture()
database_url = database_url_fixture(prepare=_prepare, backends=("sqlite", "postgres"))


def _accepts_tcp(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_psycopg2_connects_and_settings_apply(pg_cluster: PgCluster) -> None:
    conn = pg_cluster.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT current_database(), current_user, current_setting('server_version_num')::int")
            row = cur.fetchone()
            assert row is not None
            db, user, version = row
            settings = {}
            for name in (
                "listen_addresses",
                "fsync",
                "synchronous_commit",
                "full_page_writes",
                "max_connections",
                "unix_socket_directories",
                "port",
            ):
                cur.execute("SELECT current_setting(%s)", (name,))
                setting = cur.fetchone()
                assert setting is not None
                settings[name] = setting[0]
    finally:
        conn.close()
    assert (db, user) == ("test", "postgres")
    assert version >= 150000
    assert settings["listen_addresses"] == "127.0.0.1"
    assert (settings["fsync"], settings["synchronous_commit"], settings["full_page_writes"]) == ("off",) * 3
    assert settings["max_connections"] == "200"
    assert Path(settings["unix_socket_directories"]).parent == pg_cluster.base_dir
    assert int(settings["port"]) == pg_cluster.port
    assert pg_cluster.url == f"postgresql://postgres@127.0.0.1:{pg_cluster.port}/test"


def test_sqlalchemy_round_trip(pg_database: str) -> None:
    engine = sa.create_engine(pg_database)
    try:
        assert engine.dialect.driver == "psycopg2"
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL)"))
            conn.execute(sa.text("INSERT INTO items (name) VALUES ('a'), ('b')"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT name FROM items ORDER BY id")).scalars().all() == ["a", "b"]
    finally:
        engine.dispose()


def test_peewee_connects_by_url(pg_database: str) -> None:
    db = peewee_connect(pg_database)
    try:
        assert isinstance(db, peewee.PostgresqlDatabase)
        assert db.execute_sql("SELECT 41 + 1").fetchone()[0] == 42
    finally:
        db.close()


def test_fresh_databases_are_isolated(pg_cluster: PgCluster, pg_database: str) -> None:
    other = pg_cluster.create_database("isolation_check")
    try:
        engine = sa.create_engine(pg_database)
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE only_here (x int)"))
        engine.dispose()
        engine = sa.create_engine(other)
        with engine.connect() as conn:
            assert not sa.inspect(conn).has_table("only_here")
        engine.dispose()
    finally:
        pg_cluster.drop_database("isolation_check")
    assert "isolation_check" not in pg_cluster.databases()


def test_template_copies_are_made_ahead_and_dropped_after(pg_cluster: PgCluster) -> None:
    template = "copies_template"
    pg_cluster.create_database(template)
    with pg_cluster.connect(template) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE marks (x int); INSERT INTO marks VALUES (7)")
    conn.close()

    def made() -> set[str]:
        return {name for name in pg_cluster.databases() if name.startswith(f"{template}_")}

    copies = TemplateCopies(pg_cluster, template, ahead=2)
    try:
        first = copies.take()
        # The taken copy and two more, made in the background without anyone asking.
        wait_until(lambda: len(made()) == 3, 30, "copies made ahead")
        second = copies.take()
        assert len({first, second}) == 2
        conn = pg_cluster.connect(first)
        with conn.cursor() as cur:
            cur.execute("SELECT x FROM marks")
            assert cur.fetchall() == [(7,)]  # each copy holds what the template held
            cur.execute("INSERT INTO marks VALUES (8)")
        conn.commit()
        copies.give_back(first)  # dropped even with the session still open
        wait_until(lambda: first not in made(), 30, "the used copy dropped")
        conn.close()
        with pg_cluster.connect(second) as conn2, conn2.cursor() as cur:
            cur.execute("SELECT x FROM marks")
            assert cur.fetchall() == [(7,)]  # a row another copy got is not here
        conn2.close()
    finally:
        copies._worker.shutdown(wait=True)
        for name in [*made(), template]:
            pg_cluster.drop_database(name)


def test_create_and_drop_database(pg_cluster: PgCluster) -> None:
    url = pg_cluster.create_database("made_here")
    assert url.endswith(f":{pg_cluster.port}/made_here")
    conn = psycopg2.connect(url)  # a session left open must not block the drop
    try:
        assert "made_here" in pg_cluster.databases()
        pg_cluster.drop_database("made_here")
        assert "made_here" not in pg_cluster.databases()
    finally:
        conn.close()
    with pytest.raises(ValueError):
        pg_cluster.create_database('bad"; DROP DATABASE test; --')


def test_stop_shuts_down_and_removes_dir() -> None:
    with PgCluster(database="solo") as cluster:
        base, port = cluster.base_dir, cluster.port
        assert (base / "data" / "postmaster.pid").exists()
        assert _accepts_tcp(port)
    assert not base.exists()
    assert not _accepts_tcp(port)
    assert not cluster.running
    cluster.stop()  # idempotent


def test_cleanup_happens_when_the_body_fails() -> None:
    cluster = PgCluster()
    with pytest.raises(RuntimeError, match="boom"), cluster:
        base, port = cluster.base_dir, cluster.port
        raise RuntimeError("boom")
    assert not base.exists()
    assert not _accepts_tcp(port)


def test_failed_start_cleans_up() -> None:
    cluster = PgCluster(settings={"max_connections": "not-a-number"})
    with pytest.raises(PgClusterError, match="pg_ctl start failed"):
        cluster.start()
    assert not cluster.base_dir.exists()


def test_root_needs_an_existing_system_user() -> None:
    assert run_as_prefix(1000) == []
    with pytest.raises(PgClusterError, match="useradd"):
        run_as_prefix(0, "no_such_user_pgcluster")
    if os.geteuid() == 0:
        assert run_as_prefix(0)[-3:] == ["-u", "postgres", "--"]


@pytest.mark.parametrize("round_no", [1, 2])
def test_database_url_is_prepared_and_fresh_per_test(database_url: str, round_no: int) -> None:
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            # Each test sees only what prepare wrote, never a row a previous test added.
            assert [tuple(r) for r in conn.execute(sa.text("SELECT id, note FROM runs"))] == [
                (1, "from prepare")
            ]
            conn.execute(sa.text("INSERT INTO runs (id, note) VALUES (:i, 'test')"), {"i": 1 + round_no})
    finally:
        engine.dispose()
    backend = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    assert PREPARED.count(backend) == 1  # prepared once per backend, copied for every test


def test_selected_backends_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCORING_TEST_DATABASES", raising=False)
    assert selected_backends() == ("sqlite", "postgres")
    monkeypatch.setenv("SCORING_TEST_DATABASES", " postgres ")
    assert selected_backends() == ("postgres",)
    monkeypatch.setenv("SCORING_TEST_DATABASES", "sqlite,mysql")
    with pytest.raises(ValueError, match="mysql"):
        selected_backends()
