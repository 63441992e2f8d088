"""Recovery benchmark: `python -m benchmarks.recovery [--database sqlite|postgres|both] [--timings new|old]`.

How long a model stays `busy` after a `kill -9`. For each database and each scenario it starts
`python -m service serve` (API process + worker child, test embedder `hashing`) on a temp data dir or a
throwaway PostgreSQL cluster, creates a model, starts a training whose first attempt is held by a test hook
(at the engine's first progress report, "embedding", `slow_run`; or after the engine, before the saving
transaction, "saving", `slow_save`) and, once the hook announces itself:

- worker: `kill -9` of the worker child only (the API process starts another, as it does after any crash);
- host: `kill -9` of the API process and its worker at once, then a new `serve` on the same data (the host
  is back);
- control: no kill; the run is held 1.5 x the heartbeat timeout and must finish in its first attempt (a live
  run is never taken away from its worker).

It reports the seconds from the kill until the run is seen re-queued (its killed attempt's last report gone),
until the model is `ready` with the run succeeded (after a worker's kill most of it is the new worker process
starting), for `host` until the new process answered, and the run's attempts. `--timings old` runs the
former defaults (heartbeat 10 s, timeout 60 s, sweep 30 s) for comparison.
Prints a markdown table and writes benchmarks/results/recovery.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from benchmarks.load.texts import demo_slugs
from core.demo import read_demo_model
from harness.faults import faults_env
from harness.fleet import Fleet, fleet_env
from harness.pgcluster import PgCluster
from harness.processes import worker_children
from harness.service import ROOT
from harness.waiting import wait_until

RESULTS = ROOT / "benchmarks" / "results" / "recovery.json"
HANDLE = "acme.victim"
OLD_TIMINGS = {
    "SCORING_HEARTBEAT_INTERVAL_S": "10",
    "SCORING_HEARTBEAT_TIMEOUT_S": "60",
    "SCORING_RECOVERY_INTERVAL_S": "30",
}
NEW_TIMEOUT_S = 15.0
SCENARIOS = (
    ("worker", "embedding"),
    ("worker", "saving"),
    ("host", "embedding"),
    ("host", "saving"),
    ("control", "embedding"),
)


@dataclass
class Result:
    database: str
    timings: str
    kill: str
    phase: str
    requeued_s: float | None  # kill -> the run seen queued again (or already re-claimed)
    busy_after_kill_s: float  # kill -> model ready (control: hold start -> ready)
    host_up_s: float | None  # host: kill -> the new API process answers
    attempts: int


def scenario(database: str, url: str | None, timings: str, kill: str, phase: str) -> Result:
    data_dir = Path(tempfile.mkdtemp(prefix="recovery-"))
    timeout_s = float(OLD_TIMINGS["SCORING_HEARTBEAT_TIMEOUT_S"]) if timings == "old" else NEW_TIMEOUT_S
    hold_s = 1.5 * timeout_s if kill == "control" else 3600.0
    hook = "slow_run" if phase == "embedding" else "slow_save"
    env = fleet_env(
        data_dir,
        url,
        **faults_env({hook: {"handle_prefix": HANDLE, "seconds": hold_s, "attempt": 1}}),
        **(OLD_TIMINGS if timings == "old" else {}),
    )
    fleet = Fleet(data_dir, env, api_options=["--log-level", "warning"])  # one `serve` and its worker child
    serve = fleet.apis[0]
    headers = {"Authorization": f"Bearer {fleet.create_key('acme')}"}
    model = read_demo_model(demo_slugs()[0])
    host_up: float | None = None
    try:
        fleet.ensure_running(120)
        with httpx.Client(base_url=f"{fleet.url()}/v1", headers=headers, timeout=60, trust_env=False) as c:
            c.post("/models", json={"handle": HANDLE}).raise_for_status()
            c.post(f"/models/{HANDLE}/traits", json={"traits": model.traits}).raise_for_status()
            c.post(f"/models/{HANDLE}/samples", json={"samples": model.samples}).raise_for_status()
            run_id = c.post(f"/models/{HANDLE}/train", json={"effort": "low"}).json()["run_id"]
            serve.wait_for("test hook:", 120)
            started = time.monotonic()
            if kill == "worker":
                os.kill(worker_pid(serve.pid), signal.SIGKILL)
            elif kill == "host":
                worker = worker_pid(serve.pid)
                serve.kill9()
                os.kill(worker, signal.SIGKILL)
                serve.start()  # the host is back: the same service starts again, on the same port
                serve.wait_ready(120)
                host_up = time.monotonic() - started
            requeued: float | None = None

            def settled() -> dict[str, Any] | None:
                nonlocal requeued
                now = c.get(f"/models/{HANDLE}").json()
                held = _first_attempt_held(now["last_operation"], phase)
                if requeued is None and kill != "control" and not held:
                    requeued = time.monotonic() - started
                return now if now["state"] != "busy" else None

            final = wait_until(settled, 600, f"{HANDLE} to settle", interval=0.1)
            busy = time.monotonic() - started
            op = final["last_operation"]
            assert final["state"] == "ready" and op["run_id"] == run_id and op["status"] == "succeeded", op
    finally:
        fleet.stop()
    engine = create_engine(url or f"sqlite:///{data_dir / 'scoring.sqlite'}")
    with engine.connect() as conn:
        attempts = int(
            conn.execute(text("SELECT attempts FROM runs WHERE id = :id"), {"id": run_id}).scalar_one()
        )
    engine.dispose()
    return Result(
        database,
        timings,
        kill,
        phase,
        requeued and round(requeued, 1),
        round(busy, 1),
        host_up and round(host_up, 1),
        attempts,
    )


def worker_pid(serve_pid: int) -> int:
    """The worker child (`python -m service worker`) of a `serve`."""
    children = worker_children(serve_pid)
    if not children:
        raise RuntimeError("no worker child found")
    return children[0]


def _first_attempt_held(op: dict[str, Any], phase: str) -> bool:
    """Still the killed attempt's last report: running, in the phase its hook held it."""
    return bool(op["status"] == "running" and op["progress"]["phase"] == phase)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recovery")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--timings", choices=("new", "old"), default="new")
    parser.add_argument("--only", help="comma-separated kill kinds to run (worker, host, control)")
    args = parser.parse_args(argv)
    databases = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    kinds = set(args.only.split(",")) if args.only else {k for k, _ in SCENARIOS}
    load_before = os.getloadavg()
    results: list[Result] = []
    for database in databases:
        with contextlib.ExitStack() as stack:
            cluster = stack.enter_context(PgCluster()) if database == "postgres" else None
            for i, (kill, phase) in enumerate(SCENARIOS):
                if kill in kinds:
                    url = cluster.create_database(f"bench{i}") if cluster is not None else None
                    result = scenario(database, url, args.timings, kill, phase)
                    print(json.dumps(asdict(result)), flush=True)
                    results.append(result)
    print(
        "\n| database | timings | kill -9 | phase | re-queued (s) | ready (s) | new host up (s) | attempts |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        up = "" if r.host_up_s is None else f"{r.host_up_s}"
        queued = "" if r.requeued_s is None else f"{r.requeued_s}"
        cells = (r.database, r.timings, r.kill, r.phase, queued, r.busy_after_kill_s, up, r.attempts)
        print("| " + " | ".join(str(x) for x in cells) + " |")
    load = f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after (1-min load average)"
    print(f"\n{platform.node()}, {os.cpu_count()} cores; load {load}")
    stored: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for r in results:
        stored[f"{r.database}/{r.timings}/{r.kill}/{r.phase}"] = {**asdict(r), "load": load}
    RESULTS.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
