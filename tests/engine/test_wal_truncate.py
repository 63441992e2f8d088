"""truncate_wal and SqliteStore.forget: the pieces of a zero-data-retention purge on SQLite files."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from core.embedders import SqliteStore, cache_key
from core.embedders.cache import truncate_wal


def _wal_db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES ('secret-marker-1234')")
    conn.execute("DELETE FROM t")
    return conn


def test_a_reader_holding_an_old_snapshot_blocks_truncation_until_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite"
    writer = _wal_db(db)
    reader = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    reader.execute("PRAGMA busy_timeout=0")
    writer.execute("PRAGMA busy_timeout=0")  # answer busy at once, so the retries are what waits
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM t").fetchone()  # holds a read snapshot on the WAL
    writer.execute("INSERT INTO t VALUES ('later')")
    assert b"secret-marker-1234" in Path(f"{db}-wal").read_bytes()
    assert truncate_wal(writer, attempts=2, pause_s=0.01) is False
    # Released while the purge is retrying: the retry succeeds and the WAL is empty.
    threading.Timer(0.2, lambda: reader.execute("COMMIT")).start()
    started = time.monotonic()
    assert truncate_wal(writer, attempts=50, pause_s=0.05) is True
    assert time.monotonic() - started < 10
    assert Path(f"{db}-wal").stat().st_size == 0
    assert b"secret-marker-1234" not in db.read_bytes()
    reader.close()
    writer.close()


def test_forget_erases_keys_of_every_embedder_and_the_wal(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "e.sqlite")
    gone, kept = "purged text", "kept text"
    vec = np.ones(4, dtype=np.float32)
    store.put_many({cache_key("a", gone): vec, cache_key("b", gone): vec, cache_key("a", kept): vec})
    digest = hashlib.sha256(gone.encode()).hexdigest()
    assert store.forget([digest]) is True
    assert len(store) == 1 and store.get_many([cache_key("a", kept)])
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert digest.encode() not in files
    assert hashlib.sha256(kept.encode()).hexdigest().encode() in files  # the scan can see a kept key
    store.close()
