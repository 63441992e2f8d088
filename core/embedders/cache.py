"""Embedding cache keyed by embedder id + sha256(text), so known texts are never re-embedded.

`CachedEmbedder` wraps any embedder and keeps its `id`/`dim`. Stores map keys to
float32 vectors: `MemoryStore` (bounded LRU, the default) or `SqliteStore` (persistent,
WAL, shared across threads; the service keeps one in its data dir). `encode(texts,
store=False)` still reads hits but writes nothing: zero-data-retention content must
never land in a cache.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from core.embedders.base import Embedder
from core.embedders.e5 import E5_ID
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.int8_build import PER_TOKEN
from core.embedders.quantized import QINT8V2_ID

log = logging.getLogger("core.embedders.cache")


# The int8 embedders' vectors changed under the same ids: their activations went from one int8 scale per
# batch (so a text's vector depended on its batch) to one per token, then their weights were stored unsigned
# (exact on every CPU; docs/embedders.md). Then e5-small's long texts went from all their windows averaged
# to their first window (its characters cut before tokenizing: base.cut_for_window). Their vectors are keyed
# under "<id>#<scheme>", so a vector cached by an earlier computation is never read back beside new ones.
NAMESPACES = {
    QINT8V2_ID: f"{QINT8V2_ID}#{PER_TOKEN}",
    E5_QINT8_ID: f"{E5_QINT8_ID}#{PER_TOKEN}-window",
    E5_ID: f"{E5_ID}#window",
}


def cache_key(embedder_id: str, text: str) -> str:
    namespace = NAMESPACES.get(embedder_id, embedder_id)
    return f"{namespace}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def truncate_wal(conn: sqlite3.Connection, attempts: int = 20, pause_s: float = 0.1) -> bool:
    """Checkpoint a WAL-mode database and truncate its -wal file to zero bytes: old page images (deleted
    rows included) live on in the WAL until then. A reader in the middle of a transaction blocks the
    truncation (SQLite answers busy), so retry a while; False if it never succeeded. `conn` must not be
    inside a transaction."""
    for attempt in range(attempts):
        busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return True
        time.sleep(pause_s * min(attempt + 1, 5))
    return False


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL ("database or disk is full"), or an ENOSPC from the file system."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


class VectorStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, items: Mapping[str, np.ndarray]) -> None: ...

    def __len__(self) -> int: ...


class MemoryStore:
    """Bounded in-memory LRU store."""

    def __init__(self, max_items: int = 100_000) -> None:
        self.max_items = max_items
        self._data: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                vec = self._data.get(key)
                if vec is not None:
                    self._data.move_to_end(key)
                    found[key] = vec
        return found

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        with self._lock:
            for key, vec in items.items():
                self._data[key] = np.array(vec, dtype=np.float32, copy=True)
                self._data.move_to_end(key)
            while len(self._data) > self.max_items:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class SqliteStore:
    """Persistent store: one table of (key, float32 bytes), WAL mode, one connection per thread.

    A cache is an optimisation: when its disk is full, `put_many` skips the write (logged once until a
    write succeeds again) and encoding goes on; the vectors are simply computed again next time."""

    _CHUNK = 500  # stays under SQLite's bound-parameter limit

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.full = False  # the last write found the disk full
        with self._conn() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA secure_delete=ON")  # deleted keys (text hashes) are zeroed, not left behind
            self._local.conn = conn
        return conn

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        conn = self._conn()
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), self._CHUNK):
            chunk = unique[start : start + self._CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, blob in conn.execute(f"SELECT key, vec FROM embeddings WHERE key IN ({marks})", chunk):
                found[key] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        if not items:
            return
        rows: Iterable[tuple[str, bytes]] = (
            (k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()
        )
        try:
            with self._conn() as conn:  # one transaction
                conn.executemany("INSERT OR REPLACE INTO embeddings (key, vec) VALUES (?, ?)", rows)
        except sqlite3.Error as exc:
            if not is_disk_full(exc):
                raise
            if not self.full:
                log.warning(
                    "embedding cache %s: the disk is full; not caching new vectors until it has room",
                    self.path,
                )
            self.full = True
            return
        if self.full:
            log.info("embedding cache %s: writing again", self.path)
        self.full = False

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def forget(self, digests: Iterable[str]) -> bool:
        """Delete the vectors of texts with these sha256 hex digests (under every embedder id) and erase
        them from the file and its WAL (zero-data-retention purges). False if the WAL was not truncated."""
        unique = sorted(set(digests))
        conn = self._conn()
        with conn:  # one transaction
            for start in range(0, len(unique), self._CHUNK):
                chunk = unique[start : start + self._CHUNK]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM embeddings WHERE substr(key, -64) IN ({marks})", chunk)
        return truncate_wal(conn)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class CachedEmbedder:
    """Wraps an embedder; only cache misses are encoded, in one batch."""

    def __init__(self, embedder: Embedder, store: VectorStore | None = None, *, write: bool = True) -> None:
        self.embedder = embedder
        self.store: VectorStore = store if store is not None else MemoryStore()
        self.write = write  # default for `encode(store=...)`
        self.id = embedder.id
        self.dim = embedder.dim
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.embedder!r}, hits={self.hits}, misses={self.misses})"

    def read_only(self) -> CachedEmbedder:
        """A view on the same store that uses hits but never writes (for zero-data-retention content).

        Pass it wherever an Embedder is expected, e.g. `Scorer.from_snapshot(snap, cache.read_only())`.
        """
        return CachedEmbedder(self.embedder, self.store, write=False)

    def encode(self, texts: Sequence[str], store: bool | None = None) -> np.ndarray:
        """Vectors for `texts`; with `store=False` (or a read-only view) misses are encoded, never written."""
        store = self.write if store is None else store
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        keys = [cache_key(self.id, t) for t in texts]
        found = self.store.get_many(keys)
        # Encode each distinct missing text once, even when it repeats in the batch.
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            vecs = np.asarray(self.embedder.encode(list(missing.values())), dtype=np.float32)
            fresh = dict(zip(missing.keys(), vecs, strict=True))
            if store:
                self.store.put_many(fresh)
            found.update(fresh)
        for i, key in enumerate(keys):
            out[i] = found[key]
        with self._lock:
            self.misses += len(missing)
            self.hits += len(texts) - len(missing)
        return out
