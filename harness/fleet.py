"""The one launcher of the service as real processes on loopback, for tests and benchmarks alike.

A `Fleet` is `apis` API processes (`serve`) and `workers` worker processes (`worker`) on one data dir and
one database. With no worker process, the first API process runs the background runs (its worker child,
serve's default, or in its own process with `in_process_worker`) and the others pass `--no-worker`; with
worker processes, every API process passes `--no-worker`. Every process starts at once: the migrations must
not collide (tests/scale checks they do not). Each runs in a process group of its own (a terminal's Ctrl-C
reaches the test or the benchmark, not the fleet; stopping a process ends what it spawned) and appends its
output to `<data dir>/<name>.log`. Every wait is bounded; processes are stopped by PID, never by name.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import httpx

from harness.ports import free_port
from harness.processes import children, cpu_seconds, rss_mb
from harness.service import ROOT, service_command
from harness.waiting import wait_until

START_TIMEOUT_S = 180.0
API_READY = "Scoring service ready on"  # printed by `serve` once it answers (service/commands/serving.py)
WORKER_READY = "Scoring worker ready"  # printed by `worker` once it takes runs (service/process/worker.py)


def fleet_env(
    data_dir: Path, database_url: str | None = None, embedder: str = "hashing", **extra: str
) -> dict[str, str]:
    """This environment without any SCORING_ or PG setting of the caller's, plus the fleet's own: its data
    dir, database, embedder, a fresh cursor secret (a fleet refuses short or placeholder ones), no model
    download, unbuffered output (the logs are read while the processes run), then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "PG"))}
    env.update(
        {
            "SCORING_DATA_DIR": str(data_dir),
            "SCORING_EMBEDDER": embedder,
            "SCORING_CURSOR_SECRET": secrets.token_hex(32),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if database_url:
        env["SCORING_DATABASE_URL"] = database_url
    env.update(extra)
    return env


class ServiceProcess:
    """One `python -m service …` process; it may be stopped and started again (its log grows on)."""

    def __init__(
        self, name: str, args: Sequence[str], env: dict[str, str], log_path: Path, ready: str
    ) -> None:
        self.name = name
        self.args = list(args)
        self.env = env
        self.log_path = log_path
        self.ready = ready
        self.popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._offset = 0  # log position at the last start: readiness is judged on this run's output

    @property
    def pid(self) -> int:
        assert self.popen is not None, f"{self.name} was never started"
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> None:
        assert not self.alive, f"{self.name} is already running"
        self._close_log()
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            service_command(*self.args),
            cwd=ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        """This run's output so far."""
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as f:
            f.seek(self._offset)
            return f.read().decode("utf-8", "replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def wait_for(self, text: str, timeout: float = START_TIMEOUT_S) -> None:
        """Until this run's output holds `text`; fails at once, with the log, if the process exits."""

        def seen() -> bool:
            if not self.alive:
                raise RuntimeError(f"{self.name} exited waiting for {text!r}:\n{self.log_tail()}")
            return text in self.log()

        wait_until(seen, timeout, f"{self.name} to print {text!r}", interval=0.1)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        self.wait_for(self.ready, timeout)

    def kill9(self, *, group: bool = False) -> None:
        """SIGKILL this process (with `group`, everything it spawned too: a host gone at once) and reap it."""
        assert self.popen is not None
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(self.popen.pid, signal.SIGKILL)
            else:
                os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)
        self._close_log()

    def send_term(self) -> None:
        assert self.popen is not None
        self.popen.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float = 60.0) -> int:
        """The exit code; a process still running after `timeout` is killed and the wait fails."""
        assert self.popen is not None
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9(group=True)
            raise TimeoutError(f"{self.name} ignored SIGTERM for {timeout:.0f} s") from None
        self._close_log()
        return code

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM to this process alone, and its exit code (a graceful stop, as a supervisor asks it)."""
        self.send_term()
        return self.wait_exit(timeout)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM to the process group, SIGKILL after `timeout`: whatever it was doing, it is gone after."""
        self.term_group()
        self.reap(timeout)

    def term_group(self) -> None:
        """SIGTERM to the process group, once: a second one makes uvicorn quit without its graceful end."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)

    def reap(self, timeout: float = 60.0) -> None:
        """Wait for the process to end; SIGKILL to its group after `timeout`."""
        if self.popen is not None and self.popen.poll() is None:
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill9(group=True)
        self._close_log()

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def descendants(self) -> list[int]:
        return children(self.pid, recursive=True)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class Fleet:
    """`apis` API processes and `workers` worker processes of the service on one data dir and database."""

    def __init__(
        self,
        data_dir: Path,
        env: dict[str, str],
        *,
        apis: int = 1,
        workers: int = 0,
        api_options: Sequence[str] = (),
        worker_options: Sequence[str] = (),
        in_process_worker: bool = False,
    ) -> None:
        self.data_dir = data_dir
        # Without Redis each API process allows its share of the scoring limit, as a deployment sets it.
        env = {"SCORING_API_PROCESSES": str(apis), **env}
        self.env = env
        self.database_url = env.get("SCORING_DATABASE_URL")  # None: SQLite in the data dir
        self.ports = [free_port() for _ in range(apis)]
        # The data dir and database on the command line too: a process list names the fleet a process
        # belongs to (tests/deploy finds a benchmark's processes by their data dir).
        where = ["--data-dir", str(data_dir)]
        if self.database_url:
            where += ["--database-url", self.database_url]
        self.apis = []
        for i, port in enumerate(self.ports):
            options = list(api_options)
            if workers or i > 0:
                options.append("--no-worker")  # the runs are the worker processes' (or the first API's)
            elif in_process_worker:
                options.append("--in-process-worker")
            args = ["serve", "--host", "127.0.0.1", "--port", str(port), *where, *options]
            self.apis.append(ServiceProcess(f"api{i}", args, env, data_dir / f"api{i}.log", API_READY))
        self.workers = [
            ServiceProcess(
                f"worker{i}",
                ["worker", *where, *worker_options],
                env,
                data_dir / f"worker{i}.log",
                WORKER_READY,
            )
            for i in range(workers)
        ]

    @property
    def procs(self) -> list[ServiceProcess]:
        return [*self.apis, *self.workers]

    @property
    def database(self) -> str:
        """The database the processes use: `database_url`, else the SQLite file in the data dir."""
        return self.database_url or f"sqlite:///{self.data_dir / 'scoring.sqlite'}"

    def url(self, i: int = 0) -> str:
        """The address of API process `i` (any `i`: they take turns), without `/v1`."""
        return f"http://127.0.0.1:{self.ports[i % len(self.ports)]}"

    def client(
        self, i: int = 0, headers: dict[str, str] | None = None, timeout: float = 60.0
    ) -> httpx.Client:
        """An HTTP client of API process `i` (no proxy from the environment); paths start with /v1."""
        return httpx.Client(base_url=self.url(i), headers=headers, timeout=timeout, trust_env=False)

    def ensure_running(
        self, timeout: float = START_TIMEOUT_S, procs: Sequence[ServiceProcess] | None = None
    ) -> None:
        """Start whatever is not running (of `procs`, default all), all at once, then wait for each to be
        ready."""
        started = [p for p in (self.procs if procs is None else procs) if not p.alive]
        for p in started:
            p.start()
        for p in started:
            p.wait_ready(timeout)

    def create_key(self, namespace: str, scope: str = "authoring") -> str:
        """A new key of `namespace`, stored on the fleet's database as `keys create` stores it (its audit
        entries aside: no fleet's user reads them), in this process: a `keys create` process costs ~3 s of
        CPU, more than many a benchmark's test spends on its requests."""
        from service.store.api_keys import create_key as store_key
        from service.store.db import make_engine, make_session_factory, migrate, transaction

        engine = make_engine(self.database)
        try:
            migrate(engine)  # as `keys create` does: a key may be made before the processes start
            with transaction(make_session_factory(engine)) as s:
                return store_key(s, [namespace], scope)
        finally:
            engine.dispose()

    def cli(self, *args: str, timeout: float = 3600) -> str:
        """`python -m service <args>` on the fleet's data and database; its output, or an error with it."""
        done = subprocess.run(
            service_command(*args), cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"service {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
            )
        return done.stdout

    def worker_logs(self) -> str:
        return "".join(p.log_path.read_text(errors="replace") for p in self.workers if p.log_path.exists())

    def stop(self, timeout: float = 60.0) -> None:
        """Stop every process: SIGTERM to each group at once, SIGKILL to any still running after `timeout`."""
        for p in self.procs:
            p.term_group()
        for p in self.procs:
            p.reap(timeout)
