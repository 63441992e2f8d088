"""Real service processes on loopback: API processes (`serve --no-worker`) and `worker` processes sharing
one database and queue. Every wait is bounded; processes are stopped by PID, never by name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx

from harness.ports import free_port

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 90.0
# Short run timings so faults resolve in seconds (the defaults are 10 s / 60 s / 30 s).
HEARTBEAT_INTERVAL_S = 0.25
HEARTBEAT_TIMEOUT_S = 4.0
RECOVERY_INTERVAL_S = 0.5
SHUTDOWN_GRACE_S = 0.5
SLOW_RUN_S = 1.5  # models "acme.slow*" sleep this long inside their run (claimed, heartbeating)
SLOW_PREFIX = "acme.slow"
BULK_PREFIX = "acme.bulk"  # POST /samples on "acme.bulk*" holds its transaction open this long
BULK_HOLD_S = 60.0
SHARD_PREFIX = "acme.shards"  # a worker that claims a shard of these models' first training sleeps first
SHARD_HOLD_S = 3.0
SHARD_TEXTS = 100  # texts per shard of a training's embedding (models of 200 texts and more are sharded)
TEST_HOOKS = {
    "slow_run": {"handle_prefix": SLOW_PREFIX, "seconds": SLOW_RUN_S},
    "slow_samples_commit": {"handle_prefix": BULK_PREFIX, "seconds": BULK_HOLD_S},
    "slow_shard": {"handle_prefix": SHARD_PREFIX, "seconds": SHARD_HOLD_S, "attempt": 1},
}


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class Proc:
    """One `python -m service …` process; its stdout and stderr go to a log file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_path: Path, ready: str) -> None:
        self.name = name
        self.args = args
        self.env = env
        self.log_path = log_path
        self.ready = ready
        self.popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._offset = 0  # log position at the last start: readiness is judged on this run's output

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> None:
        assert not self.alive, f"{self.name} is already running"
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "service", *self.args],
            cwd=REPO,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's Ctrl-C reaches pytest, not the fleet
        )

    def log(self) -> str:
        """This run's output so far."""
        with self.log_path.open("rb") as f:
            f.seek(self._offset)
            return f.read().decode("utf-8", "replace")

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        def ready() -> bool:
            if not self.alive:
                raise AssertionError(f"{self.name} exited during start:\n{self.log()[-3000:]}")
            return self.ready in self.log()

        wait_until(ready, timeout, f"{self.name} to be ready", interval=0.1)

    def kill9(self) -> None:
        assert self.popen is not None
        os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)
        self._close_log()

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and wait; returns the exit code (kills and fails after `timeout`)."""
        self.send_term()
        return self.wait_exit(timeout)

    def send_term(self) -> None:
        assert self.popen is not None
        self.popen.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float = 60.0) -> int:
        assert self.popen is not None
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise AssertionError(f"{self.name} ignored SIGTERM for {timeout:.0f} s") from None
        self._close_log()
        return code

    def cleanup(self) -> None:
        """Kill if still running (teardown; by PID)."""
        if self.alive:
            self.kill9()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class Fleet:
    """`apis` API processes and `workers` worker processes on one database and one data dir."""

    def __init__(
        self, database_url: str, data_dir: Path, apis: int = 2, workers: int = 2, queue_url: str | None = None
    ) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "PG"))}
        env.update(
            {
                "SCORING_DATA_DIR": str(data_dir),
                "SCORING_DATABASE_URL": database_url,
                "SCORING_EMBEDDER": "hashing",
                "SCORING_CURSOR_SECRET": "f1ee7" * 8,  # a fleet refuses short or placeholder secrets
                "SCORING_HEARTBEAT_INTERVAL_S": str(HEARTBEAT_INTERVAL_S),
                "SCORING_HEARTBEAT_TIMEOUT_S": str(HEARTBEAT_TIMEOUT_S),
                "SCORING_RECOVERY_INTERVAL_S": str(RECOVERY_INTERVAL_S),
                "SCORING_SHUTDOWN_GRACE_S": str(SHUTDOWN_GRACE_S),
                "SCORING_TEST_HOOKS": json.dumps(TEST_HOOKS),
                "SCORING_SHARD_TEXTS": str(SHARD_TEXTS),
                "PYTHONUNBUFFERED": "1",
            }
        )
        if queue_url:
            env["SCORING_QUEUE_URL"] = queue_url
        self.ports = [free_port() for _ in range(apis)]
        serve = ["serve", "--no-worker", "--host", "127.0.0.1", "--log-level", "warning"]
        self.apis = [
            Proc(
                f"api{i}",
                [*serve, "--port", str(port)],
                env,
                data_dir / f"api{i}.log",
                "Scoring service ready on",
            )
            for i, port in enumerate(self.ports)
        ]
        self.workers = [
            Proc(f"worker{i}", ["worker"], env, data_dir / f"worker{i}.log", "Scoring worker ready")
            for i in range(workers)
        ]

    @property
    def procs(self) -> list[Proc]:
        return [*self.apis, *self.workers]

    def base_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i % len(self.ports)]}"

    def client(self, i: int, headers: dict[str, str]) -> httpx.Client:
        return httpx.Client(base_url=self.base_url(i), headers=headers, timeout=60.0)

    def ensure_running(self) -> None:
        """Start whatever is not running (all at once), then wait for each to be ready."""
        started = [p for p in self.procs if not p.alive]
        for p in started:
            p.start()
        for p in started:
            p.wait_ready()

    def worker_logs(self) -> str:
        return "".join(p.log_path.read_text(errors="replace") for p in self.workers if p.log_path.exists())

    def cleanup(self) -> None:
        for p in self.procs:
            p.cleanup()
