"""A run is taken from its worker only when the worker is gone, never because it is slow: `serve` and its
worker child on SQLite, a training starved by CPU hogs far past the heartbeat timeout finishes in its first
attempt. (A worker that is gone, killed with SIGKILL, still has its run recovered: tests/scale/test_fleet.py,
on every backend.)"""

from __future__ import annotations

import contextlib
import os
import re
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
from service.store.tables import Run, utcnow
from tests.support.service import TRAITS, auth, check, samples

pytestmark = pytest.mark.usefixtures("server_process")  # a service process of its own

# Short timings, so that a few seconds of load starve the heartbeat many timeouts long: the old rule (a
# heartbeat older than the timeout is a dead worker) re-queued the run here, as it did on a busy machine.
INTERVAL_S, TIMEOUT_S, SWEEP_S = 0.1, 0.5, 0.2
# The load: 20 spinners on the machine's cores (a load of 20 on 2), niced 10 so that the rest of a test run
# goes first and they only take what is left. Beside them the worker child is lowered to nice 19 (any user may
# lower a priority): it then gets about 1/150 of a core, starved as a worker at nice 2 among 20 spinners at
# nice 0 is, or more. Where the kernel schedules each session as a group (autogroup) it is the child's group
# that is lowered, and raised again after the load, so the rest of the run is not slowed. The spinners stop
# once the heartbeat was seen STALE_BEATS timeouts old (a second or two), or after HOG_S at most.
HOGS, HOG_NICE, WORKER_NICE = 20, 10, 19
STALE_BEATS, HOG_S = 4, 10.0
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
def lowered(pid: int, nice: int) -> Iterator[None]:
    """`pid` scheduled at `nice` for the block: its session's scheduling group where the kernel groups
    sessions (autogroup: a thread's nice then weighs only within its group), raised again after (a group's
    nice may go back to 0 without privileges); else each of its threads, for good (a thread's may not)."""
    group = Path(f"/proc/{pid}/autogroup")
    if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() != "1" or not group.exists():
        for tid in os.listdir(f"/proc/{pid}/task"):
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        yield
        return
    wait_until(lambda: _write(group, str(nice)), 5, "the worker's group to take its nice value")
    try:
        yield
    finally:
        wait_until(lambda: _write(group, "0"), 5, "the worker's group to take its nice value back")


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
    except BlockingIOError:  # the kernel takes one change a second
        return False
    return True


def hook_line(api: ServiceProcess, handle: str) -> bool:
    return re.search(rf"test hook: .* of {re.escape(handle)} sleeping", api.log()) is not None


def test_a_worker_starved_by_a_load_of_20_keeps_its_run(tmp_path: Path) -> None:
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
            load = spinning(HOGS, HOG_S, HOG_NICE)
            with lowered(worker_child(api), WORKER_NICE), engine.connect() as conn, load:
                release.touch()

                def starved() -> bool:
                    status, beat = conn.execute(
                        select(Run.status, Run.heartbeat_at).where(Run.id == run_id)
                    ).one()
                    conn.rollback()  # a fresh snapshot at each look
                    return status != "running" or utcnow() - beat > stale

                wait_until(starved, HOG_S, "the heartbeat to starve")
                with engine.connect() as look:
                    status, attempts = look.execute(
                        select(Run.status, Run.attempts).where(Run.id == run_id)
                    ).one()
                assert (status, attempts) == ("running", 1), "the load must starve the run while it computes"
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
