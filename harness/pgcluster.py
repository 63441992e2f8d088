"""A throwaway PostgreSQL cluster on loopback, for tests and benchmarks.

`PgCluster` runs `initdb` into a fresh temp dir, starts the server with `pg_ctl` on a free 127.0.0.1 port
(TCP on loopback only, unix socket inside the temp dir, durability off for speed, trust auth), creates a
database and exposes `.url` ("postgresql://user@127.0.0.1:PORT/db", usable by SQLAlchemy+psycopg2 and peewee).
Leaving the context (or interpreter exit, as a fallback) stops it with `pg_ctl stop -m immediate` and removes
the dir.

PostgreSQL refuses to run as root, so under root the binaries run as the existing `postgres` system user via
`runuser -u postgres --` and the temp dir is handed to that user.

Use from a conftest:

    from harness.pgcluster import database_url_fixture, pg_cluster_fixture, pg_database_fixture
    pg_cluster = pg_cluster_fixture()        # one cluster per session (started on first use)
    pg_database = pg_database_fixture()      # a fresh, empty PostgreSQL database URL per test
    database_url = database_url_fixture(prepare=migrate)   # every test once on SQLite, once on PostgreSQL
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import uuid
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import psycopg2
from psycopg2 import sql

from harness.ports import free_port
from harness.waiting import holds, wait_until

# Searched in order; PGCLUSTER_BIN (a directory) wins when set.
PG_BIN_DIRS: tuple[str, ...] = ("/usr/lib/postgresql/15/bin", "/usr/local/bin")
SERVER_SETTINGS: dict[str, str] = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "200",
    # A throwaway cluster: durability buys nothing and costs seconds per test run.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "log_min_messages": "warning",
    "log_line_prefix": "'%m [%p] '",
}
_SOCKET_PATH_MAX = 100  # unix socket paths must fit in sun_path (108 bytes on Linux)
_DB_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class PgClusterError(RuntimeError):
    """The cluster could not be created, started or used; the message says why and how to fix it."""


def find_pg_bin(bin_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding `initdb` and `pg_ctl`."""
    candidates = [bin_dir, os.environ.get("PGCLUSTER_BIN"), *PG_BIN_DIRS]
    which = shutil.which("initdb")
    if which:
        candidates.append(str(Path(which).parent))
    for cand in candidates:
        if cand and (Path(cand) / "initdb").is_file() and (Path(cand) / "pg_ctl").is_file():
            return Path(cand)
    raise PgClusterError(
        f"PostgreSQL binaries (initdb, pg_ctl) not found in {', '.join(PG_BIN_DIRS)}; install PostgreSQL 15 "
        "(e.g. `apt-get install -y postgresql-15`) or set PGCLUSTER_BIN to the directory holding them"
    )


def run_as_prefix(euid: int, os_user: str = "postgres") -> list[str]:
    """The command prefix that runs PostgreSQL binaries as a non-root user when we are root."""
    if euid != 0:
        return []
    try:
        pwd.getpwnam(os_user)
    except KeyError:
        raise PgClusterError(
            f"PostgreSQL refuses to run as root and there is no {os_user!r} system user to run it as; "
            f"create one (`useradd --system --no-create-home {os_user}`) or run the tests as a non-root user"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PgClusterError("running as root needs `runuser` (util-linux) to start PostgreSQL as a user")
    return [runuser, "-u", os_user, "--"]


def _pg_env() -> dict[str, str]:
    # PG* variables from the caller's shell must not redirect our binaries to another server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def _teardown(prefix: list[str], pg_ctl: str, data_dir: Path, base_dir: Path) -> None:
    """Stop the server (if one runs) and remove everything; safe to call on a half-built cluster."""
    pid_file = data_dir / "postmaster.pid"
    if pid_file.exists():
        subprocess.run(
            [*prefix, pg_ctl, "stop", "-D", str(data_dir), "-m", "immediate", "-w", "-t", "30"],
            cwd=base_dir,
            env=_pg_env(),
            capture_output=True,
            check=False,
        )
    if pid_file.exists():  # pg_ctl failed: do not leave a server behind
        with contextlib.suppress(OSError, ValueError, IndexError):
            os.kill(int(pid_file.read_text().splitlines()[0]), signal.SIGKILL)
    shutil.rmtree(base_dir, ignore_errors=True)


class PgCluster:
    """A throwaway PostgreSQL cluster; use as a context manager (or call start() and stop())."""

    def __init__(
        self,
        database: str = "test",
        *,
        user: str = "postgres",
        bin_dir: str | os.PathLike[str] | None = None,
        os_user: str = "postgres",
        start_timeout: float = 60.0,
        temp_root: str | os.PathLike[str] | None = None,
        settings: dict[str, str] | None = None,
    ) -> None:
        _check_db_name(database)
        self.database = database
        self.user = user
        self.os_user = os_user
        self.start_timeout = start_timeout
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        self._bin_dir = bin_dir
        self._temp_root = temp_root
        self._port: int | None = None
        self._base_dir: Path | None = None
        self._finalizer: weakref.finalize[..., PgCluster] | None = None

    # -- addresses -------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise PgClusterError("the cluster is not running")
        return self._port

    @property
    def base_dir(self) -> Path:
        if self._base_dir is None:
            raise PgClusterError("the cluster has not been started")
        return self._base_dir

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base_dir / "sock"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "server.log"

    @property
    def url(self) -> str:
        return self.url_for(self.database)

    @property
    def running(self) -> bool:
        return self._finalizer is not None and self._finalizer.alive

    def url_for(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> PgCluster:
        if self.running:
            raise PgClusterError("the cluster is already running")
        bin_dir = find_pg_bin(self._bin_dir)
        prefix = run_as_prefix(os.geteuid(), self.os_user)
        base = self._make_base_dir()
        self._base_dir = base
        pg_ctl = str(bin_dir / "pg_ctl")
        # Registered before anything can fail, so a half-started cluster is cleaned up too.
        self._finalizer = weakref.finalize(self, _teardown, prefix, pg_ctl, base / "data", base)
        try:
            if prefix:
                self._hand_over(base, prefix)
            self._initdb(prefix, bin_dir)
            self._start_server(prefix, pg_ctl)
            self._wait_ready()
            if self.database != "postgres":
                self.create_database(self.database)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server (immediate mode) and remove the temp dir; idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        self._port = None

    def __enter__(self) -> PgCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _make_base_dir(self) -> Path:
        root = Path(self._temp_root) if self._temp_root else Path(tempfile.gettempdir())
        if len(str(root)) + 60 > _SOCKET_PATH_MAX:  # deep TMPDIRs overflow the unix socket path
            root = Path("/tmp")
        base = Path(tempfile.mkdtemp(prefix="pgcluster-", dir=root))
        (base / "sock").mkdir()
        return base

    def _hand_over(self, base: Path, prefix: list[str]) -> None:
        entry = pwd.getpwnam(self.os_user)
        for path in (base, base / "sock"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        probe = subprocess.run([*prefix, "test", "-w", str(base)], capture_output=True, check=False)
        if probe.returncode != 0:
            raise PgClusterError(
                f"the {self.os_user!r} user cannot reach {base}: a parent directory is closed to it; "
                "set TMPDIR to a world-searchable directory such as /tmp"
            )

    def _run(self, prefix: list[str], args: list[str], what: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*prefix, *args],
            cwd=self.base_dir,
            env=_pg_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise PgClusterError(f"{what} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
        return proc

    def _initdb(self, prefix: list[str], bin_dir: Path) -> None:
        self._run(
            prefix,
            [
                str(bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                self.user,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            "initdb",
        )
        settings = {**self.settings, "unix_socket_directories": f"'{self.socket_dir}'"}
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("\n# harness.pgcluster\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _start_server(self, prefix: list[str], pg_ctl: str, attempts: int = 3) -> None:
        for attempt in range(attempts):
            port = free_port()
            proc = subprocess.run(
                [
                    *prefix,
                    pg_ctl,
                    "start",
                    "-D",
                    str(self.data_dir),
                    "-l",
                    str(self.log_path),
                    "-w",
                    "-t",
                    str(int(self.start_timeout)),
                    "-o",
                    f"-p {port}",
                ],
                cwd=self.base_dir,
                env=_pg_env(),
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode == 0:
                self._port = port
                return
            log = self.log_tail()
            if "could not bind" in log and attempt + 1 < attempts:  # someone took the port meanwhile
                continue
            output = f"{proc.stdout}{proc.stderr}"
            raise PgClusterError(f"pg_ctl start failed:\n{output}\n--- server log ---\n{log}")

    def _wait_ready(self) -> None:
        def accepts() -> bool:
            psycopg2.connect(self.url_for("postgres"), connect_timeout=2).close()
            return True

        try:
            wait_until(holds(accepts, psycopg2.OperationalError), self.start_timeout, "PostgreSQL", 0.1)
        except TimeoutError as exc:
            raise PgClusterError(f"server not accepting connections: {exc}\n{self.log_tail()}") from exc

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- databases -------------------------------------------------------------------------------------------

    def connect(self, database: str | None = None, **kwargs: Any) -> psycopg2.extensions.connection:
        # kwargs: psycopg2.connect's own (connection_factory, cursor_factory, libpq's options)
        connection: psycopg2.extensions.connection = psycopg2.connect(
            self.url_for(database or self.database), **kwargs
        )
        return connection

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create a database (empty, or a copy of `template`, which must have no open sessions); its URL."""
        _check_db_name(name)
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template is not None:
            _check_db_name(template)
            statement = sql.SQL("{} TEMPLATE {}").format(statement, sql.Identifier(template))
        self._admin(statement)
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting its remaining sessions."""
        _check_db_name(name)
        self._admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def disconnect_all(self, database: str) -> int:
        """Terminate every session on `database`; returns how many there were."""
        conn = self.connect("postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (database,),
                )
                row = cur.fetchone()  # a count always answers one row
                return int(row[0]) if row is not None else 0
        finally:
            conn.close()

    def databases(self) -> list[str]:
        conn = self.connect("postgres")
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY datname")
                return [row[0] for row in cur.fetchall()]
        finally:
            conn.close()

    @contextlib.contextmanager
    def fresh_database(self, prefix: str = "t", template: str | None = None) -> Iterator[str]:
        """A uniquely named database (empty, or a copy of `template`) for the block; yields its URL."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        url = self.create_database(name, template)
        try:
            yield url
        finally:
            if self.running:
                self.drop_database(name)

    def _admin(self, statement: sql.Composable) -> None:
        conn = self.connect("postgres")
        try:
            conn.autocommit = True  # CREATE/DROP DATABASE cannot run inside a transaction
            with conn.cursor() as cur:
                cur.execute(statement)
        finally:
            conn.close()


class TemplateCopies:
    """Copies of a template database made ahead on a background thread, handed out one per test.

    `CREATE DATABASE ... TEMPLATE` takes most of a second on a loaded machine; made while the previous test
    runs, a test gets its copy without waiting. Used copies are dropped on the same thread, so no test waits
    for that either. Copies still waiting when the cluster stops vanish with it.
    """

    def __init__(self, cluster: PgCluster, template: str, ahead: int = 2) -> None:
        _check_db_name(template)
        self.cluster = cluster
        self.template = template
        self.ahead = ahead
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"pg-copies-{template}")
        self._ready: deque[Future[str]] = deque()

    def take(self) -> str:
        """The name of a fresh copy of the template, for the caller alone."""
        while len(self._ready) <= self.ahead:
            self._ready.append(self._worker.submit(self._copy))
        return self._ready.popleft().result()

    def give_back(self, name: str) -> None:
        """Drop a copy taken with `take` (in the background)."""
        self._worker.submit(self._drop, name)

    def _copy(self) -> str:
        name = f"{self.template[:40]}_{uuid.uuid4().hex[:12]}"  # named for its template
        self.cluster.create_database(name, self.template)
        return name

    def _drop(self, name: str) -> None:
        if self.cluster.running:
            self.cluster.drop_database(name)


def _sqlite_copy(source: Path, target: Path) -> None:
    """Copy a SQLite database consistently, including whatever still sits in its WAL."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def _check_db_name(name: str) -> None:
    if not _DB_NAME.match(name):
        raise ValueError(f"database name {name!r} must match {_DB_NAME.pattern}")


# -- pytest fixture factories (pytest is imported lazily: benchmarks use this module too) --------------------


def pg_cluster_fixture(
    *, scope: Literal["session", "module"] = "session", database: str = "test", name: str | None = None
) -> Callable[..., Iterator[PgCluster]]:
    """A fixture yielding a running `PgCluster`; in any conftest: `pg_cluster = pg_cluster_fixture()`."""
    import pytest

    @pytest.fixture(scope=scope, name=name)
    def _pg_cluster() -> Iterator[PgCluster]:
        with PgCluster(database=database) as cluster:
            yield cluster

    return _pg_cluster


def pg_database_fixture(
    cluster_fixture: str = "pg_cluster", *, name: str | None = None
) -> Callable[..., Iterator[str]]:
    """A function-scoped fixture yielding the URL of a fresh empty database on `cluster_fixture`."""
    import pytest

    @pytest.fixture(name=name)
    def _pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
        cluster: PgCluster = request.getfixturevalue(cluster_fixture)
        with cluster.fresh_database() as url:
            yield url

    return _pg_database


BACKENDS_ENV = "SCORING_TEST_DATABASES"
ALL_BACKENDS: tuple[str, ...] = ("sqlite", "postgres")


def selected_backends(default: Sequence[str] = ALL_BACKENDS) -> tuple[str, ...]:
    """The backends to test on: $SCORING_TEST_DATABASES (comma-separated, e.g. "sqlite") or `default`."""
    raw = os.environ.get(BACKENDS_ENV, "")
    chosen = tuple(b.strip() for b in raw.split(",") if b.strip()) or tuple(default)
    unknown = set(chosen) - set(ALL_BACKENDS)
    if unknown:
        known = ", ".join(ALL_BACKENDS)
        raise ValueError(f"{BACKENDS_ENV}: unknown backend(s) {sorted(unknown)}; known: {known}")
    return chosen


def database_url_fixture(
    cluster_fixture: str = "pg_cluster",
    *,
    backends: Sequence[str] | None = None,
    prepare: Callable[[str], None] | None = None,
    name: str | None = None,
) -> Callable[..., Iterator[str]]:
    """A function-scoped fixture, parametrised over backends, yielding a fresh database URL per test.

    "sqlite" gives `sqlite:///<tmp_path>/scoring.sqlite`; "postgres" a fresh database on the session cluster
    (`cluster_fixture`, started only when a postgres case runs; those cases carry the `postgres` marker).
    `prepare(url)` (e.g. "apply the migrations") runs once per backend per session on a template that every
    test's database is copied from, so each test starts prepared without paying for it again; on PostgreSQL
    the copies are made ahead in the background (`TemplateCopies`).
    Backends default to $SCORING_TEST_DATABASES, else both.
    """
    import pytest

    chosen = tuple(backends) if backends is not None else selected_backends()
    params = [pytest.param(b, marks=[pytest.mark.postgres] if b == "postgres" else [], id=b) for b in chosen]
    templates: dict[str, Any] = {}  # backend -> template file (SQLite) / its copies (PostgreSQL)

    @pytest.fixture(params=params, name=name)
    def _database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
        if request.param == "sqlite":
            target = tmp_path / "scoring.sqlite"
            if prepare is not None:
                if "sqlite" not in templates:
                    template = request.getfixturevalue("tmp_path_factory").mktemp("db-template") / "t.sqlite"
                    prepare(f"sqlite:///{template}")
                    templates["sqlite"] = template
                _sqlite_copy(templates["sqlite"], target)
            yield f"sqlite:///{target}"
            return
        cluster: PgCluster = request.getfixturevalue(cluster_fixture)
        if prepare is not None:
            key = f"postgres:{cluster.port}"
            if key not in templates:
                template_db = f"template_{uuid.uuid4().hex[:12]}"
                prepare(cluster.create_database(template_db))
                cluster.disconnect_all(template_db)  # a template must have no sessions to be copied
                templates[key] = TemplateCopies(cluster, template_db)
            copies: TemplateCopies = templates[key]
            copy = copies.take()
            try:
                yield cluster.url_for(copy)
            finally:
                copies.give_back(copy)
            return
        with cluster.fresh_database() as url:
            yield url

    return _database_url
