"""Everything a request or a worker needs, built once per process from Settings."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from huey import Huey
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from service.config.settings import Settings
from service.domain.cursors import Cursors
from service.domain.embedding import Embedders, ScorerCache
from service.domain.needs import LOGGED, Checkpoints
from service.domain.pool_index import PoolIndex
from service.runs import shards
from service.runs.consumer import RecoveryLoop, Worker
from service.runs.executor import Executor
from service.runs.locks import RunLocks, holder_gone, run_locks_for
from service.runs.queue import Queue, make_huey
from service.store import ledger
from service.store.db import (
    make_engine,
    make_read_session_factory,
    make_session_factory,
    migrate,
    transaction,
    write_retrying,
)

log = logging.getLogger("service")
# How long the recovery sweep waits out a busy database before the round counts as failed (the next round
# tries again): a minute covers any write the service legitimately holds that long.
RECOVERY_PATIENCE_S = 60.0


@dataclass
class Context:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    reads: sessionmaker[Session]  # read-only requests
    cursors: Cursors
    embedders: Embedders
    scorers: ScorerCache
    executor: Executor
    run_locks: RunLocks
    huey: Huey
    queue: Queue
    worker: Worker | None = field(default=None)
    recovery: RecoveryLoop | None = field(default=None)
    # Set once shutdown starts: messages picked up from then on go back to the queue, unclaimed.
    stopping: bool = field(default=False)
    skip_grace: bool = field(default=False)  # a second SIGTERM: do not wait for runs in progress
    pools: PoolIndex = field(default_factory=PoolIndex)  # pool embeddings for suggestions
    # Told where runs and requests are (service/domain/needs.py); fault tests pass their own.
    checkpoints: Checkpoints = LOGGED

    @classmethod
    def build(cls, settings: Settings, checkpoints: Checkpoints = LOGGED) -> Context:
        engine = make_engine(settings.database_url, lock_timeout_s=settings.lock_timeout_s)
        migrate(engine)
        sessions = make_session_factory(engine)
        embedders = Embedders(
            settings.embedder, settings.data_dir / "embeddings.sqlite", settings.scoring_threads
        )
        run_locks = run_locks_for(engine)
        executor = Executor(settings, sessions, embedders, run_locks, checkpoints)
        huey = make_huey(settings)
        built: list[Context] = []  # the task needs the context, which needs the queue
        ctx = cls(
            settings=settings,
            engine=engine,
            sessions=sessions,
            reads=make_read_session_factory(engine),
            cursors=Cursors(settings.cursor_secret),
            embedders=embedders,
            scorers=ScorerCache(embedders),
            executor=executor,
            run_locks=run_locks,
            huey=huey,
            queue=Queue(
                huey,
                lambda run_id: built[0]._run_task(run_id),
                lambda run_id, shard_no: built[0]._shard_task(run_id, shard_no),
            ),
            checkpoints=checkpoints,
        )
        executor.enqueue_shard = ctx.queue.enqueue_shard
        executor.enqueue = ctx.queue.enqueue
        built.append(ctx)
        return ctx

    @property
    def queue_name(self) -> str:
        """Huey's storage class: SqliteStorage, SqlStorage (PostgreSQL) or RedisStorage."""
        return type(self.huey.storage).__name__

    def _run_task(self, run_id: str) -> None:
        if self.stopping:  # picked up during shutdown: leave it to another worker
            self.enqueue(run_id)
            return
        self.executor.execute(run_id)

    def _shard_task(self, run_id: str, shard_no: int) -> None:
        if self.stopping:
            self.queue.enqueue_shard(run_id, shard_no)
            return
        self.executor.embed_shard(run_id, shard_no)

    def enqueue(self, run_id: str) -> None:
        self.queue.enqueue(run_id)

    def _gone(self, run_id: str, heartbeat_at: datetime | None) -> bool:
        return holder_gone(self.run_locks, run_id, heartbeat_at, self.settings.heartbeat_timeout_s)

    def recover(self) -> list[str]:
        """Re-queue or fail runs whose worker is gone (service/runs/locks.py); returns the re-queued ids
        (already enqueued).

        Checked first without a write lock (there is rarely anything to do); the write, when there is,
        waits out a busy database (`write_retrying`) instead of failing."""
        with transaction(self.reads) as session:
            if not ledger.has_stale(session, self._gone):
                return []
        ids = write_retrying(
            self.sessions,
            lambda session: ledger.recover_stale(session, self.settings.max_attempts, self._gone),
            patience_s=RECOVERY_PATIENCE_S,
            what="run recovery",
        )
        for run_id in ids:
            log.warning("re-queued run %s: its worker is gone", run_id)
            self.enqueue(run_id)
        return ids

    def sweep(self) -> None:
        """The periodic recovery: runs whose worker is gone, queued runs whose message is lost, and the
        embedding shards of runs that ended without their worker (service/runs/shards.py)."""
        self.recover()
        with transaction(self.reads) as session:
            ended = shards.orphaned(session)
        for run_id in ended:
            shards.drop(self.sessions, run_id)
        timeout = self.settings.heartbeat_timeout_s
        with transaction(self.reads) as session:
            if not ledger.has_lost_queued(session, timeout):
                return
        pending = self.queue.pending_runs()

        def lost(run_id: str) -> bool:  # no message in the queue, and no worker about to claim it
            return run_id not in pending and not self.run_locks.held(run_id)

        lost_ids = write_retrying(
            self.sessions,
            lambda session: ledger.lost_queued(session, timeout, lost),
            patience_s=RECOVERY_PATIENCE_S,
            what="re-enqueuing lost runs",
        )
        for run_id in lost_ids:
            log.warning("enqueued run %s again: its message was lost", run_id)
            self.enqueue(run_id)

    def start_worker(self, workers: int = 1) -> None:
        """Recover, re-enqueue queued runs (claiming is idempotent, so duplicates are harmless), start."""
        self.recover()
        with transaction(self.sessions) as session:
            queued = ledger.queued_ids(session)
        for run_id in queued:
            self.enqueue(run_id)
        self.worker = Worker(self.huey, self.sweep, self.settings.recovery_interval_s, workers)
        self.worker.start()
        # The embedders' int8 graphs, built ahead of the first training that needs them (minutes, once), where
        # new models default to a setting that trains on both embedders (the default, `auto`).
        from service.runs import prebuild

        if prebuild.ahead(self.settings.embedder):
            prebuild.start()

    def start_recovery(self) -> None:
        """Recovery without executing runs (an API process next to separate workers)."""
        self.recovery = RecoveryLoop(self.sweep, self.settings.recovery_interval_s)
        self.recovery.start()

    def close(self) -> None:
        """Stop background work within the shutdown grace; hand unfinished runs back to the queue."""
        self.stopping = True
        if self.recovery is not None:
            self.recovery.stop()
            self.recovery = None
        if self.worker is not None:
            finished = self.worker.stop(self.settings.shutdown_grace_s, lambda: self.skip_grace)
            self.worker = None
            if not finished:
                self._release_claims()
        self.embedders.close()
        self.engine.dispose()

    def _release_claims(self) -> None:
        for run_id, attempt in self.executor.claims().items():
            try:
                with transaction(self.sessions) as session:
                    released = ledger.release(session, run_id, attempt)
                if released:
                    self.enqueue(run_id)
                    log.warning("handed run %s back to the queue at shutdown", run_id)
            except Exception:  # the stale-run sweep of another process will recover it
                log.exception("could not release run %s", run_id)
