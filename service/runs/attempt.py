"""One claimed attempt of a run, as a run kind sees it: its ids, the service's parts, and its progress."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from core.embedders.base import Embedder
from service.config.settings import Settings
from service.domain.embedding import Embedders
from service.domain.needs import LOGGED, Checkpoints
from service.runs.heartbeat import Heartbeat
from service.runs.locks import NoLocks, RunLocks
from service.store.db import read_sessions


@dataclass
class Attempt:
    run_id: str
    number: int  # the run's `attempts` at the claim: every write of this attempt is conditional on it
    handle: str
    settings: Settings
    sessions: sessionmaker[Session]
    embedders: Embedders
    heartbeat: Heartbeat
    # Enqueues one shard of this run's embedding for any worker (service/runs/shards.py).
    enqueue_shard: Callable[[str, int], None] = lambda run_id, shard_no: None
    checkpoints: Checkpoints = LOGGED
    # Enqueues a message for any worker: a pool embedding step (service/runs/pool_embedding.py).
    enqueue: Callable[[str], None] = lambda message: None
    started: bool = field(default=False)  # the engine has reported progress (`run_started` was reached)
    # The service's run locks: a training's coordinator judges its shards' holders by them (shards.py).
    locks: RunLocks = field(default_factory=NoLocks)

    @cached_property
    def reads(self) -> sessionmaker[Session]:
        """Sessions for a run's inputs: they read, so on SQLite they hold no write lock (a training's read
        of a million samples held it for 10 s, and every other writer waited)."""
        return read_sessions(self.sessions)

    def report(self, fraction: float, phase: str, message: str | None = None) -> None:
        """Progress of the run as a whole (0-1)."""
        self.checkpoints.reached("run_progress", self.handle, phase, self.number)
        self.heartbeat.progress(fraction, phase, message)

    def engine_progress(
        self, lo: float, hi: float, phase: str | None = None, doing: str = ""
    ) -> Callable[[float, str], None]:
        """A progress callback for an engine call that covers [lo, hi] of the run; with `phase`, the run's
        phase is that and the engine's step is said after `doing` ("comparing …: embedding")."""

        def report(fraction: float, step: str) -> None:
            self.checkpoints.reached("engine_progress", self.handle, step, self.number)
            said = None if phase is None else f"{doing}: {step}"
            self.heartbeat.progress(lo + (hi - lo) * float(fraction), phase or step, said)
            if not self.started:
                self.started = True
                where = f"run {self.run_id} attempt {self.number}"
                self.checkpoints.reached("run_started", self.handle, where, self.number)

        return report

    def watched(self, embedder: Embedder) -> Embedder:
        """`embedder` encoding in chunks with a look at the claim between them: the engine embeds all of a
        run's texts in one call, which would otherwise outlast a cancel by minutes."""
        return Watched(embedder, self.heartbeat)


class Watched:
    """An embedder whose `encode` stops between chunks once the run's claim is gone (ClaimLost)."""

    CHUNK = 512  # texts: a few seconds of the slowest embedder on one thread

    def __init__(self, embedder: Embedder, heartbeat: Heartbeat) -> None:
        self.base = embedder
        self.embedder = getattr(embedder, "embedder", embedder)  # the model behind the cache, for snapshots
        self.id = embedder.id
        self.dim = embedder.dim
        self._heartbeat = heartbeat

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) <= self.CHUNK:
            return self.base.encode(texts)
        # Chunks of similar lengths, as the embedders batch them, so padding stays as small as in one call.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.CHUNK):
            self._heartbeat.check()
            idx = order[start : start + self.CHUNK]
            out[idx] = self.base.encode([texts[i] for i in idx])
        return out
