"""What a domain function needs from the process it runs in, as narrow protocols.

The domain never imports `service.context.Context`: the context builds the run executor, whose run kinds use
the domain, so that import closed a circle through every layer. A route passes its `Context`, which
has all of these; a function asks only for what it uses. Read-only properties, so a plain attribute fits.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from service.config.settings import Settings
from service.domain.cursors import Cursors
from service.domain.embedding import Embedders, ScorerCache
from service.domain.pool_index import PoolIndex


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
    the pool index, and the engine (the zero-data-retention purge truncates SQLite's WAL through it)."""

    @property
    def settings(self) -> Settings: ...

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
