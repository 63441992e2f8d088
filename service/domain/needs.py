"""What a domain function needs from the process it runs in, as narrow protocols.

The domain never imports `service.context.Context`: the context builds the run executor, whose run kinds use
the domain, so that import closed a circle through every layer. A route passes its `Context`, which
has all of these; a function asks only for what it uses. Read-only properties, so a plain attribute fits.
"""

from __future__ import annotations

import logging
from typing import Literal, Protocol

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from service.config.settings import Settings
from service.domain.cursors import Cursors
from service.domain.embedding import Embedders, ScorerCache
from service.domain.pool_index import PoolIndex

#: Where a run or request tells its `Checkpoints` it has arrived: every engine progress report of a run
#: (`what` is the engine's phase), every progress report of a run's own (an evaluation's scoring, a
#: training's phases), a run's first engine report (claimed, heartbeating, nothing applied), a training
#: before the transaction that saves its version, an import before its commit, score feedback between counting
#: the buffer and deciding on a retraining, a worker that claimed a shard of a training's embedding.
Point = Literal[
    "engine_progress",
    "run_progress",
    "run_started",
    "version_saving",
    "samples_committing",
    "feedback_counted",
    "shard_claimed",
]


class Checkpoints(Protocol):
    """Told when a run or request reaches a `Point`. A process's own log it at debug level (logger
    `service.checkpoints`: where a stuck run or a slow request got to); another is given to
    `Context.build` (the fault-injection tests' hold a chosen model there, harness/faults.py)."""

    def reached(self, point: Point, handle: str, what: str, attempt: int | None = None) -> None:
        """`handle`: the model; `what`: the moment in words (logged); `attempt`: a run's attempt."""


class Logged:
    """The checkpoints of a process: a debug line each (nothing when the level is above debug)."""

    log = logging.getLogger("service.checkpoints")

    def reached(self, point: Point, handle: str, what: str, attempt: int | None = None) -> None:
        self.log.debug("%s of %s: %s (attempt %s)", point, handle, what, attempt)


LOGGED = Logged()


class Databases(Protocol):
    """The session factories: `sessions` for writes, `reads` for requests that only read (one snapshot)."""

    @property
    def sessions(self) -> sessionmaker[Session]: ...

    @property
    def reads(self) -> sessionmaker[Session]: ...


class RunStarter(Databases, Protocol):
    """Something that can enqueue a run (its row is created, in a transaction, before the id is enqueued)."""

    def enqueue(self, run_id: str) -> None: ...


class Resources(RunStarter, Protocol):
    """The rest of a process's shared state the domain reads: settings, page cursors, embedders and scorers,
    the pool index, the engine (the zero-data-retention purge truncates SQLite's WAL through it) and the
    checkpoints."""

    @property
    def settings(self) -> Settings: ...

    @property
    def checkpoints(self) -> Checkpoints: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def cursors(self) -> Cursors: ...

    @property
    def embedders(self) -> Embedders: ...

    @property
    def scorers(self) -> ScorerCache: ...

    @property
    def pools(self) -> PoolIndex: ...
