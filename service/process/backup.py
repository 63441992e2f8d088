"""`python -m service backup PATH` and `restore PATH`: a consistent, self-contained copy of a deployment.

SQLite: while the service runs, `scoring.sqlite` itself may hold no tables at all (everything sits in its
`-wal` until a checkpoint), so copying the file is no backup. SQLite's online backup API copies the database
as one committed state, read in one transaction (in WAL mode writers go on meanwhile). PostgreSQL: `pg_dump`
(one snapshot, custom format) and `pg_restore`. Either way the backup also holds the data directory's cursor
secret (pagination cursors stay valid) and, unless left out, the embedding cache (texts need not be embedded
again), plus `backup.json`: what is in it, the schema revision, row counts and each file's sha256.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from core.json_types import JsonObject
from service.config.settings import Settings
from service.store.db import make_engine, migrate

MANIFEST = "backup.json"
DATABASE_FILE = "scoring.sqlite"
PG_DUMP_FILE = "scoring.pgdump"
CACHE_FILE = "embeddings.sqlite"
SECRET_FILE = "cursor_secret"
FORMAT = 1
COUNTED = ("models", "samples", "versions", "tags", "runs", "api_keys")


class BackupError(Exception):
    """The backup or restore cannot go ahead; the message says why and what to do."""


def backup(settings: Settings, target: Path, *, include_cache: bool = True) -> JsonObject:
    """Back up `settings`' deployment into `target` (a new or empty directory); returns the manifest."""
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target} is not empty: back up into a new directory")
    target.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    if settings.is_sqlite:
        copy_sqlite(sqlite_path(settings.database_url), target / DATABASE_FILE)
        files.append(DATABASE_FILE)
        counted_url = f"sqlite:///{target / DATABASE_FILE}"
    else:
        pg_dump(settings.database_url, target / PG_DUMP_FILE)
        files.append(PG_DUMP_FILE)
        counted_url = settings.database_url  # counts from the live database: a moment apart from the dump
    secret = settings.data_dir / SECRET_FILE
    if secret.exists():
        shutil.copyfile(secret, target / SECRET_FILE)
        os.chmod(target / SECRET_FILE, 0o600)
        files.append(SECRET_FILE)
    cache = settings.data_dir / CACHE_FILE
    if include_cache and cache.exists():
        copy_sqlite(cache, target / CACHE_FILE)
        files.append(CACHE_FILE)
    revision, counts = describe(counted_url)
    manifest = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": "sqlite" if settings.is_sqlite else "postgresql",
        "schema_revision": revision,
        "counts": counts,
        "cursor_secret": "in the backup"
        if SECRET_FILE in files
        else "from SCORING_CURSOR_SECRET: not copied",
        "files": {name: sha256_of(target / name) for name in files},
    }
    # Written last: a directory without it is an unfinished backup.
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def restore(settings: Settings, source: Path) -> JsonObject:
    """Restore the backup in `source` into `settings`' (empty) database and data directory."""
    manifest = read_manifest(source)
    for name, digest in manifest["files"].items():
        if sha256_of(source / name) != digest:
            raise BackupError(
                f"{source / name} does not match its checksum in {MANIFEST}: the backup is damaged"
            )
    if manifest["database"] == "sqlite":
        if not settings.is_sqlite:
            raise BackupError(
                "this is a SQLite backup; restore it into a SQLite data directory (no --database-url)"
            )
        target = sqlite_path(settings.database_url)
        if has_tables(settings.database_url):
            raise BackupError(f"{target} already holds a database: restore into an empty data directory")
        for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
            stale.unlink(missing_ok=True)
        copy_sqlite(source / DATABASE_FILE, target)
    else:
        if settings.is_sqlite:
            raise BackupError("this is a PostgreSQL backup; restore it with --database-url postgresql://…")
        if has_tables(settings.database_url):
            raise BackupError("the target PostgreSQL database is not empty: restore into a new database")
        pg_restore(source / PG_DUMP_FILE, settings.database_url)
    if SECRET_FILE in manifest["files"]:
        # The data directory holds no database, so a secret in it was minted just now (Settings does that).
        shutil.copyfile(source / SECRET_FILE, settings.data_dir / SECRET_FILE)
        os.chmod(settings.data_dir / SECRET_FILE, 0o600)
    if CACHE_FILE in manifest["files"]:
        cache = settings.data_dir / CACHE_FILE
        for stale in (cache, Path(f"{cache}-wal"), Path(f"{cache}-shm")):
            stale.unlink(missing_ok=True)
        copy_sqlite(source / CACHE_FILE, cache)
    engine = make_engine(settings.database_url)
    try:
        migrate(engine)  # a backup from an older release is brought to this one's schema
    finally:
        engine.dispose()
    return manifest


def read_manifest(source: Path) -> JsonObject:
    path = source / MANIFEST
    if not path.exists():
        raise BackupError(f"{source} has no {MANIFEST}: not a backup, or an unfinished one")
    manifest: JsonObject = json.loads(path.read_text())
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{path}: backup format {manifest.get('format')!r}, this release reads {FORMAT}")
    return manifest


def copy_sqlite(source: Path, target: Path) -> None:
    """One consistent copy of a live SQLite database, as a single self-contained file (no -wal)."""
    if not source.exists():
        raise BackupError(f"{source} does not exist")
    src = sqlite3.connect(source, timeout=30)
    dst = sqlite3.connect(target)
    try:
        # pages=-1: every page in one step, i.e. one read transaction (a stepwise copy restarts whenever
        # another connection writes, and under steady writes might never finish).
        src.backup(dst, pages=-1)
        dst.execute("PRAGMA journal_mode=DELETE")
        problem = dst.execute("PRAGMA quick_check").fetchone()[0]
        if problem != "ok":
            raise BackupError(f"the copy of {source} failed its integrity check: {problem}")
    finally:
        dst.close()
        src.close()


def sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise BackupError(f"{url!r} is not a SQLite file")
    return Path(database)


def has_tables(url: str) -> bool:
    if url.startswith("sqlite") and not sqlite_path(url).exists():
        return False
    engine = create_engine(url)
    try:
        return "models" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def describe(url: str) -> tuple[str, dict[str, int]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
            counts = {t: int(conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one()) for t in COUNTED}
    finally:
        engine.dispose()
    return str(revision), counts


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---- PostgreSQL ------------------------------------------------------------------------------------------


def pg_tool(name: str) -> str:
    """`pg_dump` / `pg_restore`: on PATH, else the newest in Debian's /usr/lib/postgresql/*/bin."""
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise BackupError(
            f"{name} not found: install the PostgreSQL client tools (e.g. apt-get install postgresql-client)"
        )
    return found


def libpq_args(url: str) -> tuple[list[str], dict[str, str]]:
    """`--dbname` for a libpq tool, and the password in PGPASSWORD (never on a command line `ps` shows)."""
    parsed = make_url(url)
    env = {**os.environ}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    plain = parsed.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    return ["--dbname", plain], env


def pg_dump(url: str, target: Path) -> None:
    args, env = libpq_args(url)
    run_tool([pg_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(target), *args], env)


def pg_restore(dump: Path, url: str) -> None:
    args, env = libpq_args(url)
    run_tool([pg_tool("pg_restore"), "--no-owner", "--exit-on-error", *args, str(dump)], env)


def run_tool(cmd: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[-2000:]}")
