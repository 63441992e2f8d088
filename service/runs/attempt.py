"""One claimed attempt of a run, as a run kind sees it: its ids, the service's parts, and its progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from sqlalchemy.orm import Session, sessionmaker

from service.config.settings import Settings
from service.domain.embedding import Embedders
from service.domain.needs import UNWATCHED, Checkpoints
from service.runs.heartbeat import Heartbeat
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
    checkpoints: Checkpoints = UNWATCHED
    started: bool = field(default=False)  # the engine has reported progress (`run_started` was reached)

    @cached_property
    def reads(self) -> sessionmaker[Session]:
        """Sessions for a run's inputs: they read, so on SQLite they hold no write lock (a training's read
        of a million samples held it for 10 s, and every other writer waited)."""
        return read_sessions(self.sessions)

    def report(self, fraction: float, phase: str, message: str | None = None) -> None:
        """Progress of the run as a whole (0-1)."""
        self.heartbeat.progress(fraction, phase, message)

    def engine_progress(self, lo: float, hi: float) -> Callable[[float, str], None]:
        """A progress callback for an engine call that covers [lo, hi] of the run."""

        def report(fraction: float, phase: str) -> None:
            self.checkpoints.reached("engine_progress", self.handle, phase, self.number)
            self.heartbeat.progress(lo + (hi - lo) * float(fraction), phase)
            if not self.started:
                self.started = True
                where = f"run {self.run_id} attempt {self.number}"
                self.checkpoints.reached("run_started", self.handle, where, self.number)

        return report
