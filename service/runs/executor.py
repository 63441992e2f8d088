"""Executes one run: read inputs, run the engine outside any transaction, then apply the effect (new
version / traits / samples, model state, ZDR purge, prune) in ONE transaction. A crash anywhere before that
commit leaves no trace but a run to recover."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from core.engine.errors import EngineError
from service.config.settings import Settings
from service.domain.embedding import Embedders
from service.domain.needs import LOGGED, Checkpoints
from service.domain.pool_index import parse_embedding_step
from service.runs import discover, evaluate, pool_embedding, shards, synthesize, train
from service.runs.attempt import Attempt
from service.runs.heartbeat import ClaimLost, Heartbeat
from service.runs.locks import RunLocks
from service.store import ledger
from service.store.db import write_retrying
from service.store.schema import Model, Run

log = logging.getLogger("service.runs")

# A run handed back to the queue by a worker shutting down is tried again this often, this long, while that
# worker's process exits (within 10 s of handing its runs back: Settings.shutdown_grace_s).
HANDBACK_POLL_S = 0.1
HANDBACK_WAIT_S = 10.0

# What each kind of run does: one entry per `core.contract.RUN_KINDS` (tested).
KINDS: dict[str, Callable[[Attempt], None]] = {
    "train": train.execute,
    "retrain": train.execute,
    "backfill": train.execute,
    "discover": discover.execute,
    "synthesize": synthesize.execute,
    "evaluate": evaluate.execute,
}


class Executor:
    def __init__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        embedders: Embedders,
        run_locks: RunLocks,
        checkpoints: Checkpoints = LOGGED,
    ) -> None:
        self.settings = settings
        self.checkpoints = checkpoints
        self.sessions = sessions
        self.embedders = embedders
        self.run_locks = run_locks
        # Enqueues one shard of a run's embedding (the context sets it once the queue exists).
        self.enqueue_shard: Callable[[str, int], None] = lambda run_id, shard_no: None
        # Enqueues a message for any worker (a pool embedding step); set with enqueue_shard.
        self.enqueue: Callable[[str], None] = lambda message: None
        # Claims this process holds: {run_id: attempt}, so a shutting-down worker can hand them back.
        self.active: dict[str, int] = {}
        self._active_lock = threading.Lock()

    def claims(self) -> dict[str, int]:
        with self._active_lock:
            return dict(self.active)

    def execute(self, run_id: str) -> None:
        step = parse_embedding_step(run_id)
        if step is not None:  # a pool import's texts to embed: no run to claim (runs/pool_embedding.py)
            self._embed_pool(*step)
            return
        # The run's lock from before the claim until after its last write: while the row says `running`, its
        # worker holds it, and the lock goes with the worker's process (service/runs/locks.py).
        deadline = time.monotonic() + HANDBACK_WAIT_S
        while True:
            with self.run_locks.hold(run_id) as mine:
                if mine:
                    self._claim_and_execute(run_id)
                    return
            # Held elsewhere. A running run (or a duplicate message) is that worker's; the sweeps cover the
            # rest. A queued one was handed back by a worker shutting down, whose lock goes when its process
            # ends, a moment later: wait for that rather than leave the run to the sweep of lost messages,
            # which looks at it only after the heartbeat timeout.
            if not self._queued(run_id) or time.monotonic() > deadline:
                log.info("run %s is held by another worker", run_id)
                return
            time.sleep(HANDBACK_POLL_S)

    def _queued(self, run_id: str) -> bool:
        with self.sessions() as session:
            return session.scalar(select(Run.status).where(Run.id == run_id)) == "queued"

    def _claim_and_execute(self, run_id: str) -> None:
        def claim(s: Session) -> tuple[str, int, str] | None:
            run = ledger.claim(s, run_id)
            if run is None:
                return None
            return (
                run.kind,
                run.attempts,
                s.scalar(select(Model.handle).where(Model.id == run.model_id)) or "",
            )

        claimed = write_retrying(self.sessions, claim, patience_s=self._patience, what=f"claiming {run_id}")
        if claimed is None:
            return
        kind, attempt, handle = claimed
        log.info("run %s (%s) attempt %d started", run_id, kind, attempt)
        with self._active_lock:
            self.active[run_id] = attempt
        try:
            self._execute_claimed(run_id, kind, attempt, handle)
        finally:
            with self._active_lock:
                self.active.pop(run_id, None)

    def _execute_claimed(self, run_id: str, kind: str, attempt: int, handle: str) -> None:
        try:
            beat = (self.sessions, run_id, attempt, self.settings.heartbeat_interval_s, self._patience)
            with Heartbeat(*beat) as hb:
                parts = (self.settings, self.sessions, self.embedders)
                at = Attempt(
                    run_id,
                    attempt,
                    handle,
                    *parts,
                    hb,
                    self.enqueue_shard,
                    self.checkpoints,
                    enqueue=self.enqueue,
                    locks=self.run_locks,
                )
                execute = KINDS.get(kind)
                if execute is None:
                    raise EngineError(f"unknown run kind {kind!r}")
                execute(at)
        except ClaimLost:
            # Cancelled, or recovered after this worker's run lock was lost (its database connection dropped):
            # this attempt applies nothing. Never while the lock is held: a slow worker keeps its claim.
            log.warning("run %s attempt %d: the claim was lost, abandoning this attempt", run_id, attempt)
        except EngineError as exc:
            self._fail(run_id, attempt, exc.code, str(exc))
        except Exception as exc:
            log.exception("run %s failed", run_id)
            self._fail(
                run_id, attempt, "internal_error", f"The run failed unexpectedly ({type(exc).__name__})."
            )
        else:
            log.info("run %s finished", run_id)

    def _embed_pool(self, model_id: int, first: int, last: int) -> None:
        try:
            pool_embedding.execute(self.sessions, self.embedders, model_id, first, last)
        except Exception:  # a head start only: suggestions embed what is missing themselves
            log.exception("embedding the pool texts %d..%d of model %d failed", first, last, model_id)

    def embed_shard(self, run_id: str, shard_no: int) -> None:
        """A shard of a run's embedding (service/runs/shards.py); one that fails is re-queued by the run."""
        try:
            parts = (self.sessions, self.embedders, self.settings, self.checkpoints, self.run_locks)
            shards.work(*parts, run_id, shard_no)
        except Exception:
            log.exception("run %s: shard %d failed; its run's worker will queue it again", run_id, shard_no)

    def _fail(self, run_id: str, attempt: int, code: str, message: str) -> None:
        failed = write_retrying(
            self.sessions,
            lambda s: ledger.fail(s, run_id, attempt, code, message),
            patience_s=self._patience,
            what=f"failing {run_id}",
        )
        if failed:
            shards.drop(self.sessions, run_id)

    @property
    def _patience(self) -> float:
        """How long the run's bookkeeping waits out a busy database (a claim, a failure) before giving up."""
        return self.settings.heartbeat_timeout_s
