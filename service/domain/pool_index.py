"""The embeddings of a model's unlabelled pool, kept in memory between suggestion requests.

An import stores its texts and answers at once; the worker then embeds them into the embedding cache (a
step named by `embedding_step`, on the run queue: embedded in the request, 3,000 texts took a minute against
a fifth of a second, and scoring slowed beside them). A suggestion reads the pool's vectors from that
cache and embeds any text the worker has not reached yet itself, so it is right before the worker is done,
only slower. Later suggestions reuse the matrix here. Pool ids are never reused, so the sorted list of a
pool's ids says whether the matrix is current; only rows added since are read and embedded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.embedders.base import Embedder
from service.store.tables import PoolText

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


class PoolIndex:
    def __init__(self) -> None:
        self._pools: OrderedDict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def matrix(self, session: Session, model_id: int, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
        """(ids, embeddings) of the model's pool, ids ascending, one row per id."""
        ids = np.fromiter(
            session.scalars(select(PoolText.id).where(PoolText.model_id == model_id).order_by(PoolText.id)),
            dtype=np.int64,
        )
        key = (model_id, embedder.id)
        with self._lock:
            cached = self._pools.get(key)
            if cached is not None and np.array_equal(cached[0], ids):
                self._pools.move_to_end(key)
                return cached
            X = np.zeros((len(ids), embedder.dim), dtype=np.float32)
            missing = np.ones(len(ids), dtype=bool)
            if cached is not None and len(cached[0]):
                old_ids, old_X = cached
                pos = np.searchsorted(old_ids, ids).clip(0, len(old_ids) - 1)
                hit = old_ids[pos] == ids
                X[hit] = old_X[pos[hit]]
                missing = ~hit
            todo = ids[missing]
            rows = np.flatnonzero(missing)
            for start in range(0, len(todo), _READ_CHUNK):
                chunk = [int(i) for i in todo[start : start + _READ_CHUNK]]
                texts = dict(
                    session.execute(select(PoolText.id, PoolText.text).where(PoolText.id.in_(chunk)))
                    .tuples()
                    .all()
                )
                X[rows[start : start + len(chunk)]] = embedder.encode([texts[i] for i in chunk])
            self._pools[key] = (ids, X)
            self._pools.move_to_end(key)
            while len(self._pools) > KEEP_POOLS:
                self._pools.popitem(last=False)
            return ids, X

    def forget(self, model_id: int) -> None:
        with self._lock:
            for key in [k for k in self._pools if k[0] == model_id]:
                del self._pools[key]
