"""Engine and session factory; Alembic migrations applied programmatically."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, CursorResult, Delete, Engine, Update, create_engine, event, text
from sqlalchemy.engine.interfaces import DBAPIConnection, DBAPICursor
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from core.embedders.cache import truncate_wal as sqlite_truncate_wal
from service.errors import is_lock_timeout

log = logging.getLogger("service.db")

MIGRATIONS_DIR = Path(__file__).parents[1] / "migrations"
READ_ONLY_OPTION = "scoring_read_only"
MIGRATION_LOCK_ID = 72_310_461  # any constant; names the advisory lock held while migrating
# Connections kept open per process. SQLAlchemy's default (5 kept + 10 overflow, closed again on return)
# made 16 concurrent requests open and close a connection almost every request; up to 2 x this many are
# opened under load, which with PostgreSQL's default max_connections=100 leaves room for 3 processes.
POOL_SIZE = 16
SLOW_WRITE_S = 1.0  # a SQLite write transaction longer than this is logged (with how long it held the lock)
ANALYZE_FROM = 10_000  # rows: fewer cost no more to scan than to seek (analyze_after_growth)


def analyze_after_growth(session: Session, table: str, before: int, after: int) -> None:
    """PostgreSQL: ANALYZE `table` when a count of its rows (a trait's samples) grows past 10,000, 100,000,
    1,000,000 and so on. A new database has no statistics until autovacuum's next round, up to a minute
    later; meanwhile the planner takes a trait for a row or two and reads all of it for each batch's
    duplicate check instead of seeking its keys (a batch of 500 at 100,000 samples took 176 ms,
    not 1.7 ms). SQLite's planner needs no statistics to prefer the index that matches the most columns."""
    bind = session.get_bind()
    if bind.dialect.name != "postgresql" or after < ANALYZE_FROM:
        return
    if len(str(after)) > len(str(max(before, 1))):  # a power of ten crossed
        session.execute(text(f"ANALYZE {table}"))


def make_engine(url: str, *, lock_timeout_s: float = 30.0) -> Engine:
    """`lock_timeout_s`: how long a SQLite writer waits for the write lock (then 503 `database_busy`)."""
    # hide_parameters: a database error's message never carries bound values (sample text) into a log.
    options: dict[str, object] = {"pool_size": POOL_SIZE, "max_overflow": POOL_SIZE, "hide_parameters": True}
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True, **options)
    connect_args = {"check_same_thread": False, "timeout": lock_timeout_s}
    engine = create_engine(url, connect_args=connect_args, **options)
    busy_timeout_ms = int(lock_timeout_s * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy own transactions (pysqlite's implicit BEGIN would defeat BEGIN IMMEDIATE).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cur.execute("PRAGMA foreign_keys=ON")
        # Deleted rows are overwritten with zeros instead of lingering in free space (zero-data-retention;
        # with truncate_wal below, no byte of a purged text stays in the file or its WAL).
        cur.execute("PRAGMA secure_delete=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front: a deferred transaction that later writes can fail with
        # SQLITE_BUSY in WAL mode without waiting for busy_timeout. Readers (see make_read_session_factory)
        # stay deferred, so in WAL mode they never wait for a writer.
        read_only = conn.get_execution_options().get(READ_ONLY_OPTION, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")
        if not read_only:
            conn.info["write_lock_since"] = time.monotonic()

    @event.listens_for(engine, "before_cursor_execute")
    def _first_statement(conn: Connection, _cursor: DBAPICursor, statement: str, *_args: object) -> None:
        if (
            "write_lock_since" in conn.info
            and "write_first" not in conn.info
            and statement != "BEGIN IMMEDIATE"
        ):
            conn.info["write_first"] = " ".join(statement.split())[:100]  # SQL only: values are bound apart

    def _on_end(conn: Connection) -> None:
        since = conn.info.pop("write_lock_since", None)
        first = conn.info.pop("write_first", "")
        if since is not None and (held := time.monotonic() - since) > SLOW_WRITE_S:
            # Every other writer of the database waited meanwhile: make long holders visible.
            log.warning(
                "a write transaction held SQLite's write lock for %.1f s (it began with %s)", held, first
            )

    event.listen(engine, "commit", _on_end)
    event.listen(engine, "rollback", _on_end)

    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def make_read_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions for requests that only read: every statement of one session sees one snapshot.

    SQLite: a deferred BEGIN (no write lock) whose first read fixes the snapshot for the transaction.
    PostgreSQL: REPEATABLE READ, so a model row and its run, version and tag rows, read by separate
    statements, come from one snapshot (at READ COMMITTED each statement saw the commits made since the
    previous one: `busy` beside a succeeded run in 2 % of polls while runs finished).
    """
    options: dict[str, object] = {READ_ONLY_OPTION: True}
    if engine.dialect.name == "postgresql":
        options["isolation_level"] = "REPEATABLE READ"
    return sessionmaker(engine.execution_options(**options), expire_on_commit=False)


def read_sessions(sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    """Read sessions on the engine of `sessions`: a worker is handed the write factory, and reads its inputs
    and others' shards without the write lock."""
    return make_read_session_factory(sessions.kw["bind"])


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One session, committed on success, rolled back on any exception."""
    with factory() as session, session.begin():
        yield session


def write_retrying[T](
    factory: sessionmaker[Session], work: Callable[[Session], T], *, patience_s: float, what: str
) -> T:
    """`work` in one write transaction, begun again while the database is busy, for up to `patience_s`.

    For the background's own bookkeeping (run claims, heartbeats, the recovery sweep): a lock that another
    writer legitimately holds is waited out (each attempt waits up to the busy timeout, then this backs off
    and tries again) instead of failing the bookkeeping. A wait longer than a second is logged with its
    length, so a long writer shows in the log without an error.
    """
    started = time.monotonic()
    pause = 0.05
    while True:
        try:
            with transaction(factory) as session:
                result = work(session)
        except OperationalError as exc:
            waited = time.monotonic() - started
            if not is_lock_timeout(exc) or waited + pause > patience_s:
                raise
            log.info("%s: the database is busy after %.1f s; trying again", what, waited)
            time.sleep(pause)
            pause = min(2 * pause, 2.0)
            continue
        waited = time.monotonic() - started
        if waited > 1.0:
            log.info("%s waited %.1f s for the database", what, waited)
        return result


def rows_changed(session: Session, statement: Update | Delete) -> int:
    """How many rows an UPDATE or DELETE changed (its result is a CursorResult; Session.execute's type says
    only Result)."""
    result = session.execute(statement)
    assert isinstance(result, CursorResult)
    return result.rowcount


def truncate_wal(engine: Engine) -> bool:
    """SQLite: checkpoint and truncate the WAL (old page images of deleted rows live on in it until then).
    Nothing to do elsewhere (PostgreSQL: docs/service-writes.md, zero-data-retention). False if readers
    kept it."""
    if engine.dialect.name != "sqlite":
        return True
    raw = engine.raw_connection()
    try:
        assert raw.driver_connection is not None  # a live pooled connection
        return sqlite_truncate_wal(raw.driver_connection)  # autocommit: outside any transaction
    finally:
        raw.close()


def alembic_config(engine: Engine | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if engine is not None:
        # configparser interpolates "%": a percent-encoded password needs it doubled.
        url = engine.url.render_as_string(hide_password=False).replace("%", "%%")
        cfg.set_main_option("sqlalchemy.url", url)
    return cfg


@functools.cache
def script_head() -> str | None:
    """The newest revision of the migration scripts: read from their files once per process."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def at_head(engine: Engine) -> bool:
    """Whether the database's recorded revision is the scripts' head: alembic_version read without a lock
    (SQLite: a deferred BEGIN, so starting processes never queue for the write lock here)."""
    with engine.connect().execution_options(**{READ_ONLY_OPTION: True}) as conn, conn.begin():
        current = MigrationContext.configure(conn).get_current_heads()
    return current == (script_head(),)


def migrate(engine: Engine) -> bool:
    """Bring the schema to the newest revision (idempotent); whether alembic's upgrade ran.

    A database already at head (every start but the first after a release) skips alembic's upgrade, which
    costs tens of milliseconds per start. Any other revision, including one this code does not know (a
    database ahead of it), goes through the upgrade under the lock and fails there as before."""
    if at_head(engine):
        return False
    log.info("migrating the database schema to %s", script_head())
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Several processes may start at once on a new database: one migrates, the others wait here
            # and then find the schema at head. (SQLite's BEGIN IMMEDIATE already serialises them.)
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    return True
