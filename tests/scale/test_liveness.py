"""A run is taken from its worker only when the worker is gone, never because it is slow: `serve` and its
worker child on SQLite, a training starved far past the heartbeat timeout beside CPU hogs finishes in its
first attempt. (A worker that is gone, killed with SIGKILL, still has its run recovered:
tests/scale/test_fleet.py, on every backend.)"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from harness.busy import spinning
from harness.faults import faults_env
from harness.fleet import Fleet, ServiceProcess, fleet_env
from harness.waiting import wait_until
from service.store.db import make_engine
from service.store.schema import Run, utcnow
from tests.support.service import TRAITS, auth, check, samples

pytestmark = pytest.mark.usefixtures("server_process")  # a service process of its own

# Short timings, so that a starved worker's heartbeat is soon many timeouts old: the old rule (a heartbeat
# older than the timeout is a dead worker) re-queued the run here, as it did on a busy machine.
INTERVAL_S, TIMEOUT_S, SWEEP_S = 0.1, 0.5, 0.2
# The starvation: the worker child is stopped (SIGSTOP: no CPU at all, the limit of what a load does to it,
# reached on any machine) while niced spinners load the cores the service's sweeps run on; it is continued
# once its heartbeat was seen STALE_BEATS timeouts old, by which time the sweep looked at it many times.
HOGS, HOG_NICE, HOG_S = 4, 10, 60.0
STALE_BEATS = 4
HOLD_S = 120.0  # the bound of the test hook's hold (the test releases it long before)


def make_model(c: httpx.Client, handle: str) -> None:
    check(c.post("/v1/models", json={"handle": handle}), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}), 201)
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": samples()}), 201)


def settled(c: httpx.Client, handle: str) -> dict[str, object]:
    def done() -> dict[str, object] | None:
        model = check(c.get(f"/v1/models/{handle}"), 200)
        return None if model["state"] == "busy" else model

    return wait_until(done, 300, f"{handle} to settle", interval=0.25)


def worker_child(api: ServiceProcess) -> int:
    """The pid of `serve`'s worker child (`python -m service worker`)."""

    def found() -> int | None:
        for pid in api.descendants():
            with contextlib.suppress(OSError):
                if b"worker" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                    return pid
        return None

    return wait_until(found, 60, "the worker child")


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """`pid` stopped for the block: it runs no thread, its heartbeat's included, and holds what it held."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def hook_line(api: ServiceProcess, handle: str) -> bool:
    return re.search(rf"test hook: .* of {re.escape(handle)} sleeping", api.log()) is not None


def test_a_starved_worker_keeps_its_run(tmp_path: Path) -> None:
    release = tmp_path / "go"
    hooks = {
        "slow_run": {"handle_prefix": "acme.slow", "seconds": HOLD_S, "attempt": 1, "release": str(release)}
    }
    env = fleet_env(
        tmp_path,
        SCORING_HEARTBEAT_INTERVAL_S=str(INTERVAL_S),
        SCORING_HEARTBEAT_TIMEOUT_S=str(TIMEOUT_S),
        SCORING_RECOVERY_INTERVAL_S=str(SWEEP_S),
        **faults_env(hooks),
    )
    fleet = Fleet(tmp_path, env, apis=1, api_options=["--log-level", "warning"])
    engine = make_engine(fleet.database)
    try:
        fleet.ensure_running()
        api = fleet.apis[0]
        with fleet.client(0, auth(fleet.create_key("acme"))) as c:
            # Slow, not gone: claimed, held at its first progress report, then computing under the load.
            make_model(c, "acme.slow-load")
            run_id = check(c.post("/v1/models/acme.slow-load/train", json={"effort": "low"}), 202)["run_id"]
            started = f"run {run_id} (train) attempt 1 started"
            wait_until(
                lambda: hook_line(api, "acme.slow-load") or "claim was lost" in api.log(), 120, started
            )
            assert hook_line(api, "acme.slow-load"), api.log()[-3000:]  # the old rule took it before the load
            stale = timedelta(seconds=STALE_BEATS * TIMEOUT_S)
            child = worker_child(api)
            with engine.connect() as conn, spinning(HOGS, HOG_S, HOG_NICE), stopped(child):
                release.touch()

                def starved() -> bool:
                    status, beat = conn.execute(
                        select(Run.status, Run.heartbeat_at).where(Run.id == run_id)
                    ).one()
                    conn.rollback()  # a fresh snapshot at each look
                    return status != "running" or utcnow() - beat > stale

                wait_until(starved, HOG_S, "the heartbeat to go stale")
                with engine.connect() as look:
                    status, attempts = look.execute(
                        select(Run.status, Run.attempts).where(Run.id == run_id)
                    ).one()
                assert (status, attempts) == ("running", 1), "a starved worker keeps its run"
            model = settled(c, "acme.slow-load")
            assert model["state"] == "ready", model
            log = api.log()
            assert started in log
            assert "attempt 2 started" not in log  # never computed twice, at once or after
            for taken in ("re-queued run", "again: its message was lost", "claim was lost"):
                assert taken not in log, log[-3000:]
            with engine.connect() as conn:
                assert conn.execute(select(Run.status, Run.attempts).where(Run.id == run_id)).one() == (
                    "succeeded",
                    1,
                )

    finally:
        engine.dispose()
        fleet.stop(timeout=20)
