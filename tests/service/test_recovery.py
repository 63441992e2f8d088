"""Crash safety: a worker dying mid-run leaves no partial version, loses no sample, and the model
stays trainable; stale runs are re-queued (up to 3 attempts) or failed, also across a restart."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from service.config.settings import Settings
from service.store import ledger
from service.store.schema import Run, SampleRow, Version, utcnow
from tests.support.checkpoints import on_progress
from tests.support.service import Svc, check, make_model, running, wait_settled


class WorkerDied(BaseException):
    """Stands in for the process dying: not an Exception, so nothing in the run catches it."""


def die_mid_run(phase: str) -> None:
    raise WorkerDied(phase)


def crash(svc: Svc, run_id: str) -> None:
    """Run until the engine's first progress report, die there, then let the heartbeat go stale."""
    with on_progress(svc.ctx.executor, die_mid_run), pytest.raises(WorkerDied):
        svc.ctx.executor.execute(run_id)
    with svc.ctx.sessions() as s, s.begin():
        s.execute(update(Run).where(Run.id == run_id).values(heartbeat_at=utcnow() - timedelta(minutes=5)))


def counts(svc: Svc) -> tuple[int, int]:
    with svc.ctx.sessions() as s:
        return (
            s.scalar(select(func.count()).select_from(Version)) or 0,
            s.scalar(select(func.count()).select_from(SampleRow)) or 0,
        )


def test_crash_then_requeue_completes_once(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.crash")
    run_id = check(c.post("/v1/models/acme.crash/train", json={}, headers=h), 202)["run_id"]
    crash(idle_svc, run_id)
    model = check(c.get("/v1/models/acme.crash", headers=h), 200)
    assert model["state"] == "busy" and model["last_operation"]["status"] == "running"
    progress = model["last_operation"]["progress"]  # what the dead worker reported last
    assert progress["phase"] == "embedding" and 0 < progress["fraction"] < 1 and progress["message"]
    assert counts(idle_svc) == (0, 24)  # no half-written version, every sample intact

    assert idle_svc.ctx.recover() == [run_id]
    op = check(c.get("/v1/models/acme.crash", headers=h), 200)["last_operation"]
    assert op["status"] == "queued" and "Retrying" in op["progress"]["message"]
    idle_svc.ctx.executor.execute(run_id)
    model = check(c.get("/v1/models/acme.crash", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1
    assert counts(idle_svc) == (1, 24)
    with idle_svc.ctx.sessions() as s, s.begin():
        run = s.get(Run, run_id)
        assert run is not None and run.attempts == 2
        # The dead attempt can never finish the run it lost.
        assert ledger.succeed(s, run_id, 1) is False


def test_dies_every_attempt_then_failed_and_trainable(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.doomed")
    run_id = check(c.post("/v1/models/acme.doomed/train", json={}, headers=h), 202)["run_id"]
    for attempt in (1, 2, 3):
        crash(idle_svc, run_id)
        requeued = idle_svc.ctx.recover()
        assert requeued == ([run_id] if attempt < 3 else [])
    model = check(c.get("/v1/models/acme.doomed", headers=h), 200)
    assert model["state"] == "failed" and model["current_version_id"] is None
    op = model["last_operation"]
    assert op["status"] == "failed" and op["error"]["code"] == "worker_lost" and op["error"]["message"]
    assert counts(idle_svc) == (0, 24)
    # failed is an untrained model: edits work, and training again succeeds.
    check(
        c.post(
            "/v1/models/acme.doomed/samples",
            json={
                "samples": [
                    {"trait": "formality", "text": "Yours faithfully, the secretary.", "quality": 1.0}
                ]
            },
            headers=h,
        ),
        201,
    )
    again = check(c.post("/v1/models/acme.doomed/train", json={}, headers=h), 202)["run_id"]
    idle_svc.ctx.executor.execute(again)
    model = check(c.get("/v1/models/acme.doomed", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1


def test_failed_retune_keeps_ready_on_active_version(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.keep")
    first = check(c.post("/v1/models/acme.keep/train", json={}, headers=h), 202)["run_id"]
    idle_svc.ctx.executor.execute(first)
    retune = check(c.post("/v1/models/acme.keep/train", json={"reoptimize_params": True}, headers=h), 202)[
        "run_id"
    ]
    for _ in range(3):
        crash(idle_svc, retune)
        idle_svc.ctx.recover()
    model = check(c.get("/v1/models/acme.keep", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1
    assert model["last_operation"]["status"] == "failed"
    check(c.post("/v1/models/acme.keep/score", json={"content": "still serving"}, headers=h), 200)


def test_restart_recovers_and_finishes(tmp_path: Path, database_url: str) -> None:
    with running(tmp_path, run_worker=False, database_url=database_url) as svc:
        make_model(svc.client, svc.author, "acme.restart")
        run_id = check(svc.client.post("/v1/models/acme.restart/train", json={}, headers=svc.author), 202)[
            "run_id"
        ]
        crash(svc, run_id)
        author = svc.author
    # A new process on the same data dir: recovery on start re-queues, the worker finishes the run.
    with running(tmp_path, database_url=database_url) as svc2:
        model = wait_settled(svc2.client, "acme.restart", author)
        assert model["state"] == "ready" and model["version_no"] == 1
        assert model["last_operation"]["run_id"] == run_id
        assert counts(svc2) == (1, 24)


def test_periodic_recovery_in_the_running_worker(tmp_path: Path, database_url: str) -> None:
    """The worker's own sweep (not the start-up recovery) re-queues a stale run and finishes it."""
    with running(tmp_path, run_worker=False, database_url=database_url) as svc:
        make_model(svc.client, svc.author, "acme.sweep")
        run_id = check(svc.client.post("/v1/models/acme.sweep/train", json={}, headers=svc.author), 202)[
            "run_id"
        ]
        crash(svc, run_id)
        set_heartbeat(svc, run_id, timedelta(hours=1))  # looks alive through the next start-up
        author = svc.author
    with running(tmp_path, database_url=database_url, recovery_interval_s=0.2) as svc2:
        assert check(svc2.client.get("/v1/models/acme.sweep", headers=author), 200)["state"] == "busy"
        set_heartbeat(svc2, run_id, -timedelta(minutes=5))  # now it is dead; only the sweep can notice
        model = wait_settled(svc2.client, "acme.sweep", author)
        assert model["state"] == "ready" and model["version_no"] == 1


def set_heartbeat(svc: Svc, run_id: str, offset: timedelta) -> None:
    with svc.ctx.sessions() as s, s.begin():
        s.execute(update(Run).where(Run.id == run_id).values(heartbeat_at=utcnow() + offset))


def test_a_worker_that_lost_its_claim_stops_and_applies_nothing(idle_svc: Svc) -> None:
    """Recovered elsewhere mid-run (on PostgreSQL: its lock's connection dropped and its heartbeat went
    stale, the process alive): the old attempt aborts at its next progress report instead of computing on and
    writes nothing; the new attempt finishes the run once."""
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.lost")
    run_id = check(c.post("/v1/models/acme.lost/train", json={}, headers=h), 202)["run_id"]
    reports: list[str] = []

    def recovered_elsewhere(phase: str) -> None:
        reports.append(phase)
        if len(reports) == 1:
            with idle_svc.ctx.sessions() as s, s.begin():  # what a sweep that saw the lock free does
                assert ledger.recover_stale(s, 3, lambda run, beat: True) == [run_id]

    with on_progress(idle_svc.ctx.executor, recovered_elsewhere):
        idle_svc.ctx.executor.execute(run_id)  # returns: the claim is gone
    model = check(c.get("/v1/models/acme.lost", headers=h), 200)
    assert model["state"] == "busy" and model["last_operation"]["status"] == "queued"
    assert counts(idle_svc) == (0, 24)
    full: list[str] = []
    with on_progress(idle_svc.ctx.executor, full.append):
        idle_svc.ctx.executor.execute(run_id)
    assert len(reports) < len(full)  # the lost attempt stopped at its next progress write
    assert check(c.get("/v1/models/acme.lost", headers=h), 200)["version_no"] == 1
    with idle_svc.ctx.sessions() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.attempts == 2


def test_sweep_enqueues_a_queued_run_whose_message_was_lost(idle_svc: Svc) -> None:
    """A worker killed between taking the message and claiming the run: the sweep enqueues it again,
    once per heartbeat timeout; a fresh queued run, and one whose message still waits, are left alone."""
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.orphan")
    make_model(c, h, "acme.fresh")
    orphan = check(c.post("/v1/models/acme.orphan/train", json={}, headers=h), 202)["run_id"]
    fresh = check(c.post("/v1/models/acme.fresh/train", json={}, headers=h), 202)["run_id"]
    idle_svc.ctx.huey.flush()  # both messages lost
    set_heartbeat(idle_svc, orphan, -timedelta(minutes=5))
    with idle_svc.ctx.sessions() as s, s.begin():
        s.execute(update(Run).where(Run.id == orphan).values(created_at=utcnow() - timedelta(minutes=5)))
    idle_svc.ctx.sweep()
    assert [t.args for t in idle_svc.ctx.huey.pending()] == [(orphan,)]
    idle_svc.ctx.sweep()  # just enqueued: not again until another timeout passes
    assert len(idle_svc.ctx.huey.pending()) == 1
    assert fresh not in {t.args[0] for t in idle_svc.ctx.huey.pending()}
    # A run waiting its turn for longer than the timeout still has its message: none is added.
    set_heartbeat(idle_svc, orphan, -timedelta(minutes=5))
    idle_svc.ctx.sweep()
    assert [t.args for t in idle_svc.ctx.huey.pending()] == [(orphan,)]


def test_shutdown_hands_unfinished_runs_back(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.handback")
    run_id = check(c.post("/v1/models/acme.handback/train", json={}, headers=h), 202)["run_id"]
    with idle_svc.ctx.sessions() as s, s.begin():
        claimed = ledger.claim(s, run_id)
        assert claimed is not None
        attempt = claimed.attempts
    idle_svc.ctx.executor.active[run_id] = attempt  # as if a consumer thread were still in the run
    idle_svc.ctx.huey.flush()
    idle_svc.ctx._release_claims()
    idle_svc.ctx.executor.active.clear()
    assert [t.args for t in idle_svc.ctx.huey.pending()] == [(run_id,)]
    op = check(c.get("/v1/models/acme.handback", headers=h), 200)["last_operation"]
    assert op["status"] == "queued" and "shut down" in op["progress"]["message"]
    with idle_svc.ctx.sessions() as s, s.begin():
        assert ledger.succeed(s, run_id, attempt) is False  # the old attempt is fenced off
    idle_svc.ctx.executor.execute(run_id)
    assert check(c.get("/v1/models/acme.handback", headers=h), 200)["version_no"] == 1


def test_heartbeat_timings_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_HEARTBEAT_TIMEOUT_S", "5")
    monkeypatch.setenv("SCORING_HEARTBEAT_INTERVAL_S", "1")
    settings = Settings.from_env(data_dir=tmp_path, embedder="hashing")
    assert (settings.heartbeat_timeout_s, settings.heartbeat_interval_s) == (5.0, 1.0)


def test_a_live_run_outlasting_the_timeout_is_not_taken_away(tmp_path: Path, database_url: str) -> None:
    """Short timings: a run busy twice the heartbeat timeout, swept every 0.2 s, keeps its claim. The
    timeout is 8 beats, as the default's 7.5: with 5 (1 s), a heartbeat held up for a second on a busy
    2-core CI (three test workers) let the sweep take a live run away."""
    timings = {"heartbeat_interval_s": 0.25, "heartbeat_timeout_s": 2.0, "recovery_interval_s": 0.2}
    with running(tmp_path, database_url=database_url, **timings) as svc:
        c, h = svc.client, svc.author
        held: list[str] = []

        def hold(phase: str) -> None:
            if not held:
                held.append(phase)
                time.sleep(4.0)  # the engine busy in native code: only the heartbeat thread speaks

        make_model(c, h, "acme.long")
        with on_progress(svc.ctx.executor, hold):
            run_id = check(c.post("/v1/models/acme.long/train", json={"effort": "low"}, headers=h), 202)[
                "run_id"
            ]
            model = wait_settled(c, "acme.long", h)
        assert held and model["state"] == "ready" and model["last_operation"]["status"] == "succeeded"
        with svc.ctx.sessions() as s:
            run = s.get(Run, run_id)
            assert run is not None and run.attempts == 1


def test_a_run_is_taken_only_from_a_worker_that_is_gone(idle_svc: Svc) -> None:
    """The run lock (service/runs/locks.py) tells a dead worker's run from a live one, whatever its
    heartbeat says: a held lock keeps a run however stale its heartbeat; a free one gives it up at once."""
    c, h, ctx = idle_svc.client, idle_svc.author, idle_svc.ctx
    make_model(c, h, "acme.orphan")
    run_id = check(c.post("/v1/models/acme.orphan/train", json={}, headers=h), 202)["run_id"]
    with ctx.run_locks.hold(run_id) as mine:  # a live worker: lock held, claimed, heartbeat fresh
        assert mine and ctx.run_locks.held(run_id)
        with ctx.run_locks.hold(run_id) as second:
            assert not second  # a duplicate message finds the run taken
        with ctx.sessions() as s, s.begin():
            assert ledger.claim(s, run_id) is not None
        assert ctx.recover() == []
        # A worker a busy machine starves beats late: still alive while it holds the lock, however late.
        set_heartbeat(idle_svc, run_id, -timedelta(hours=1))
        assert ctx.recover() == []
        messages = len(ctx.huey.pending())
        ctx.sweep()
        assert len(ctx.huey.pending()) == messages  # nor is it sent again
    assert not ctx.run_locks.held(run_id)  # its process is gone: so is the lock
    if ctx.run_locks.proves_exit:  # one host: a free file lock is an exited process
        set_heartbeat(idle_svc, run_id, timedelta(0))
        assert ctx.recover() == [run_id]  # at once, the heartbeat still fresh
    else:  # PostgreSQL: a free lock may be a dropped connection; the heartbeat must have stopped too
        assert ctx.recover() == [run_id]  # (set an hour old above)
    ctx.executor.execute(run_id)
    model = check(c.get("/v1/models/acme.orphan", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1
