"""The embeddings of a model's unlabelled pool, kept in memory between suggestion requests.

An import stores its texts and answers at once; the worker then embeds them into the embedding cache (a
step named by `embedding_step`, on the run queue: embedded in the request, 3,000 texts took a minute against
a fifth of a second, and scoring slowed beside them). A suggestion reads the pool's vectors from that
cache and never waits for the whole pool: it picks among the texts embedded so far, and embeds itself only
the few its answer lacks (service/domain/suggestions.py), since a text's window costs seconds of a core with
the blend and a pool at the quota would take an hour. Later suggestions reuse the matrix here. Pool ids are
never reused, so the sorted list of a pool's ids says whether the matrix is current; only rows added since,
or not ready before, are read from the cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.embedders import CachedEmbedder, cache_key
from core.embedders.base import Embedder
from service.store.schema import PoolText

KEEP_POOLS = 2  # a 100,000-text MiniLM pool is 150 MB of float32
# Texts read and embedded at once when the worker has not reached them: up to MAX_TEXT_CHARS each, so a piece
# holds 10 M characters at most, whatever the pool's size.
_READ_CHUNK = 500

# The queue's messages carry a run id; the pool's embedding step is named apart from every run id (uuids).
_STEP = "pool-embedding"


def embedding_step(model_id: int, first_id: int, last_id: int) -> str:
    """The queue message that has the worker embed the model's pool texts with ids first_id..last_id (one
    import request's new texts)."""
    return f"{_STEP}:{model_id}:{first_id}:{last_id}"


def parse_embedding_step(message: str) -> tuple[int, int, int] | None:
    """(model id, first id, last id) of a pool embedding step; None for any other message (a run id)."""
    kind, _, rest = message.partition(":")
    parts = rest.split(":")
    if kind != _STEP or len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def cached(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, found) of `texts` in the embedding cache, nothing encoded: a row is found when every
    embedder of `embedder` (a blend's parts, else itself) has it cached; rows not found are zeros."""
    parts = getattr(embedder, "parts", None) or [embedder]
    found = np.ones(len(texts), dtype=bool)
    halves = []
    for part in parts:
        store = getattr(part, "store", None)
        half = np.zeros((len(texts), part.dim), dtype=np.float32)
        if not isinstance(part, CachedEmbedder) or store is None:
            found[:] = False
        else:
            keys = [cache_key(part.id, t) for t in texts]
            got = store.get_many(keys)
            for i, key in enumerate(keys):
                vec = got.get(key)
                if vec is None:
                    found[i] = False
                else:
                    half[i] = vec
        halves.append(half)
    X = np.hstack(halves) if len(halves) > 1 else halves[0]
    X[~found] = 0.0
    return X, found


def unit_rows(X: np.ndarray) -> np.ndarray:
    """`X`'s rows L2-normalised (rows of zeros stay zeros): a blend's vector is two unit halves side by side,
    and suggestions compare vectors by their dot product (a near-duplicate is a cosine of 0.95 or more)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    out: np.ndarray = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
    return out


@dataclass(frozen=True)
class Matrix:
    """A pool's vectors, ids ascending, one row per id; `ready[i]`: row i's vector is known (else zeros: the
    worker has not embedded its text yet, nor has a suggestion)."""

    ids: np.ndarray
    X: np.ndarray
    ready: np.ndarray


class PoolIndex:
    def __init__(self) -> None:
        self._pools: OrderedDict[tuple[int, str], Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def matrix(self, session: Session, model_id: int, embedder: Embedder) -> Matrix:
        """The model's pool's vectors as far as they are known: kept here, else read from the embedding
        cache. Nothing is encoded: a text the worker has not reached is not ready (see `learn`)."""
        ids = np.fromiter(
            session.scalars(select(PoolText.id).where(PoolText.model_id == model_id).order_by(PoolText.id)),
            dtype=np.int64,
        )
        key = (model_id, embedder.id)
        with self._lock:
            kept = self._pools.get(key)
            if kept is not None and kept.ready.all() and np.array_equal(kept.ids, ids):
                self._pools.move_to_end(key)
                return kept
        X = np.zeros((len(ids), embedder.dim), dtype=np.float32)
        ready = np.zeros(len(ids), dtype=bool)
        if kept is not None and len(kept.ids):
            pos = np.searchsorted(kept.ids, ids).clip(0, len(kept.ids) - 1)
            hit = (kept.ids[pos] == ids) & kept.ready[pos]
            X[hit] = kept.X[pos[hit]]
            ready = hit
        rows = np.flatnonzero(~ready)
        for start in range(0, len(rows), _READ_CHUNK):
            chunk = rows[start : start + _READ_CHUNK]
            wanted = [int(i) for i in ids[chunk]]
            texts = dict(
                session.execute(select(PoolText.id, PoolText.text).where(PoolText.id.in_(wanted)))
                .tuples()
                .all()
            )
            vecs, found = cached(embedder, [texts[i] for i in wanted])
            X[chunk[found]] = vecs[found]
            ready[chunk[found]] = True
        return self._keep(key, Matrix(ids, unit_rows(X), ready))

    def learn(self, model_id: int, embedder: Embedder, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Rows a request embedded itself (the worker had not reached them): ready from now on."""
        key = (model_id, embedder.id)
        with self._lock:
            kept = self._pools.get(key)
        if kept is None or not len(ids):
            return
        pos = np.searchsorted(kept.ids, ids).clip(0, len(kept.ids) - 1)
        hit = kept.ids[pos] == ids
        X, ready = kept.X.copy(), kept.ready.copy()  # copied: requests reading the kept one keep theirs
        X[pos[hit]] = vectors[hit]
        ready[pos[hit]] = True
        self._keep(key, Matrix(kept.ids, X, ready))

    def _keep(self, key: tuple[int, str], matrix: Matrix) -> Matrix:
        with self._lock:
            self._pools[key] = matrix
            self._pools.move_to_end(key)
            while len(self._pools) > KEEP_POOLS:
                self._pools.popitem(last=False)
        return matrix

    def forget(self, model_id: int) -> None:
        with self._lock:
            for key in [k for k in self._pools if k[0] == model_id]:
                del self._pools[key]
