"""The runs table: create (with idempotency key), claim, heartbeat, progress, finish/fail, recovery.

Every transition is a conditional UPDATE on (status, attempts), so a worker that lost its claim
(its run was recovered and handed to another worker) can never finish or fail it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from core.contract import RUNS_IN_FLIGHT, ModelState, RunKind
from core.json_types import JsonObject
from core.model_states import state_after_run
from service.store.db import rows_changed
from service.store.schema import Model, Run, RunProgress, utcnow

IN_FLIGHT = RUNS_IN_FLIGHT


def new_run_id() -> str:
    return f"run_{secrets.token_hex(16)}"


def progress_doc(fraction: float, phase: str, message: str) -> RunProgress:
    return {"fraction": round(max(0.0, min(1.0, float(fraction))), 4), "phase": phase, "message": message}


def create_run(
    session: Session,
    model: Model,
    kind: RunKind,
    options: JsonObject,
    *,
    idempotency_key: str | None = None,
) -> Run:
    """Queue a run and put the model in `busy`; the caller enqueues the id after commit."""
    run = Run(
        id=new_run_id(),
        model_id=model.id,
        kind=kind,
        status="queued",
        options=options,
        idempotency_key=idempotency_key,
        progress=progress_doc(0.0, "queued", "Waiting for a worker"),
        error=None,
        attempts=0,
        return_state=model.state,
        created_at=utcnow(),
    )
    session.add(run)
    model.state = "busy"
    model.last_run_id = run.id
    model.updated_at = utcnow()
    return run


def record_done(session: Session, model: Model, kind: str, message: str) -> Run:
    """An operation done within the request (reopen): a succeeded run, so `last_operation` reports it
    like every other change of state."""
    now = utcnow()
    run = Run(
        id=new_run_id(),
        model_id=model.id,
        kind=kind,
        status="succeeded",
        options={},
        idempotency_key=None,
        progress=progress_doc(1.0, "done", message),
        error=None,
        attempts=1,
        return_state=model.state,
        created_at=now,
        started_at=now,
        finished_at=now,
    )
    session.add(run)
    model.last_run_id = run.id
    return run


def in_flight(session: Session, model: Model) -> Run | None:
    if model.last_run_id is None:
        return None
    run = session.get(Run, model.last_run_id)
    return run if run is not None and run.status in IN_FLIGHT else None


def find_duplicate(session: Session, model_id: int, key: str) -> Run | None:
    """A queued, running or succeeded run with the same idempotency key (failed and cancelled ones do not
    block)."""
    return session.scalar(
        select(Run)
        .where(
            Run.model_id == model_id,
            Run.idempotency_key == key,
            Run.status.not_in(("failed", "cancelled")),
        )
        .order_by(Run.created_at.desc())
        .limit(1)
    )


def claim(session: Session, run_id: str) -> Run | None:
    """queued → running, attempts + 1. None when the run is not queued (done, or claimed elsewhere)."""
    now = utcnow()
    changed = rows_changed(
        session,
        update(Run)
        .where(Run.id == run_id, Run.status == "queued")
        .values(
            status="running",
            attempts=Run.attempts + 1,
            started_at=now,
            heartbeat_at=now,
            progress=progress_doc(0.0, "starting", "A worker picked up the run"),
        )
        .execution_options(synchronize_session=False),
    )
    if changed != 1:
        return None
    run = session.get(Run, run_id, populate_existing=True)
    return run


def _mine(run_id: str, attempt: int) -> ColumnElement[bool]:
    return (Run.id == run_id) & (Run.status == "running") & (Run.attempts == attempt)


def touch(session: Session, run_id: str, attempt: int, progress: RunProgress | None = None) -> bool:
    """Heartbeat (and optionally progress); False when the claim was lost."""
    values: dict[str, object] = {"heartbeat_at": utcnow()}
    if progress is not None:
        values["progress"] = progress
    changed = rows_changed(
        session,
        update(Run)
        .where(_mine(run_id, attempt))
        .values(**values)
        .execution_options(synchronize_session=False),
    )
    return changed == 1


def succeed(session: Session, run_id: str, attempt: int, message: str = "Done") -> bool:
    """running → succeeded, in the caller's transaction (the one that applies the run's effect)."""
    changed = rows_changed(
        session,
        update(Run)
        .where(_mine(run_id, attempt))
        .values(status="succeeded", finished_at=utcnow(), progress=progress_doc(1.0, "done", message))
        .execution_options(synchronize_session=False),
    )
    return changed == 1


def fail(session: Session, run_id: str, attempt: int | None, code: str, message: str) -> bool:
    """Mark the run failed for good and put its model back in a trainable state."""
    cond = _mine(run_id, attempt) if attempt is not None else (Run.id == run_id) & Run.status.in_(IN_FLIGHT)
    run = session.scalar(select(Run).where(cond))
    if run is None:
        return False
    progress: RunProgress = {**run.progress, "message": f"Failed: {message}"}
    run.status = "failed"
    run.error = {"code": code, "message": message}
    run.finished_at = utcnow()
    run.progress = progress
    model = session.get(Model, run.model_id)
    if model is not None and model.state == "busy" and model.last_run_id == run.id:
        model.state = state_after(model, run, succeeded=False)
        model.updated_at = utcnow()
    return True


def cancel(session: Session, run: Run, message: str) -> bool:
    """queued or running → cancelled, its model back in the state the run started from; False when the run
    had already ended. A worker executing it finds its claim gone at its next heartbeat or progress write
    and applies nothing (every write of an attempt is conditional on `running`), and neither recovery nor a
    restart takes it again (they take only `queued` and `running` runs)."""
    changed = rows_changed(
        session,
        update(Run)
        .where(Run.id == run.id, Run.status.in_(IN_FLIGHT))
        .values(
            status="cancelled",
            finished_at=utcnow(),
            progress={**run.progress, "phase": "cancelled", "message": message},
        )
        .execution_options(synchronize_session=False),
    )
    session.refresh(run)
    if changed != 1:
        return False
    model = session.get(Model, run.model_id)
    if model is not None and model.state == "busy" and model.last_run_id == run.id:
        model.state = run.return_state
        model.updated_at = utcnow()
    return True


def state_after(model: Model, run: Run, *, succeeded: bool) -> ModelState:
    """The state `run` leaves `model` in (core.model_states.state_after_run: docs/api.md, "States")."""
    has_version = model.current_version_id is not None
    return state_after_run(run.kind, run.return_state, succeeded=succeeded, has_version=has_version)


# Whether a running run's worker is gone, given the run's id and heartbeat (service/runs/locks.holder_gone).
Gone = Callable[[str, datetime | None], bool]


def has_stale(session: Session, gone: Gone) -> bool:
    """Whether `recover_stale` would find anything, read without a write lock: the sweep of every process
    runs every few seconds, and on SQLite a write transaction would queue behind every import."""
    running = session.execute(select(Run.id, Run.heartbeat_at).where(Run.status == "running")).tuples().all()
    return any(gone(run_id, beat) for run_id, beat in running)


def has_lost_queued(session: Session, timeout_s: float) -> bool:
    """Whether `lost_queued` would find a candidate (read without a write lock, as `has_stale`)."""
    cutoff = utcnow() - timedelta(seconds=timeout_s)
    lost = select(Run.id).where(
        Run.status == "queued", func.coalesce(Run.heartbeat_at, Run.created_at) < cutoff
    )
    return session.scalar(lost.limit(1)) is not None


def recover_stale(session: Session, max_attempts: int, gone: Gone, now: datetime | None = None) -> list[str]:
    """Runs whose worker is gone (`gone`, the rule of service/runs/locks.py): re-queue (attempts left) or
    fail. Returns ids to enqueue.

    The rows are locked (FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite serialises writers), so two processes
    sweeping at once never both re-queue a run, and a run claimed again meanwhile (another attempt) is left.
    """
    running = session.execute(
        select(Run.id, Run.attempts, Run.heartbeat_at).where(Run.status == "running")
    ).tuples()
    found = {run_id: attempts for run_id, attempts, beat in running if gone(run_id, beat)}
    if not found:
        return []
    candidates = session.scalars(
        select(Run).where(Run.id.in_(list(found)), Run.status == "running").with_for_update(skip_locked=True)
    ).all()
    requeue: list[str] = []
    for run in candidates:
        if found[run.id] != run.attempts:
            continue
        if run.attempts < max_attempts:
            run.status = "queued"
            run.heartbeat_at = now or utcnow()  # for a queued run: when it was last enqueued
            run.progress = progress_doc(
                0.0, "queued", f"Retrying after the worker stopped (attempt {run.attempts})"
            )
            requeue.append(run.id)
        else:
            fail(
                session,
                run.id,
                run.attempts,
                "worker_lost",
                f"The worker stopped during the run {run.attempts} times; the run was abandoned.",
            )
    return requeue


def lost_queued(
    session: Session, timeout_s: float, lost: Callable[[str], bool], now: datetime | None = None
) -> list[str]:
    """Queued runs enqueued longer than `timeout_s` ago whose message is `lost` (none in the queue, no worker
    holding the run): it died with a worker that had dequeued it. Enqueuing again is harmless (claiming is
    idempotent). Every candidate's time is reset, so a run waiting behind a long queue is looked at once per
    timeout and gets at most one extra message per timeout."""
    at = now or utcnow()
    cutoff = at - timedelta(seconds=timeout_s)
    candidates = list(
        session.scalars(
            select(Run.id)
            .where(Run.status == "queued", func.coalesce(Run.heartbeat_at, Run.created_at) < cutoff)
            .with_for_update(skip_locked=True)
        )
    )
    if candidates:
        session.execute(
            update(Run)
            .where(Run.id.in_(candidates), Run.status == "queued")
            .values(heartbeat_at=at)
            .execution_options(synchronize_session=False)
        )
    return [run_id for run_id in candidates if lost(run_id)]


def release(session: Session, run_id: str, attempt: int) -> bool:
    """Hand a claimed run back to the queue (a worker shutting down); the attempt stays counted so the
    releasing worker's late writes are still fenced off."""
    changed = rows_changed(
        session,
        update(Run)
        .where(_mine(run_id, attempt))
        .values(
            status="queued",
            heartbeat_at=utcnow(),
            progress=progress_doc(0.0, "queued", "Re-queued: the worker shut down"),
        )
        .execution_options(synchronize_session=False),
    )
    return changed == 1


def queued_ids(session: Session) -> list[str]:
    return list(session.scalars(select(Run.id).where(Run.status == "queued").order_by(Run.created_at)))
