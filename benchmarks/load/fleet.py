"""The service under load: N `python -m service serve` processes over one data dir and database.

SQLite in a temp data dir, or a throwaway PostgreSQL cluster (`harness.pgcluster`). Each process runs in a
process group of its own, so stopping it also ends what `serve` spawned (its worker child).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.pgcluster import PgCluster
from harness.ports import free_port
from harness.service import ROOT, create_key, serve_command

NAMESPACE = "bench"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def service_env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


@dataclass
class Service:
    """N API processes sharing one data dir and database; process 0 also runs the background worker."""

    data_dir: Path
    database_url: str | None
    embedder: str
    processes: int = 1
    worker: str = "child"  # process 0's background runs: "child" (serve's default) or "in-process"
    ports: list[int] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def base_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{p}" for p in self.ports]

    def start(self, timeout: float) -> None:
        for i in range(self.processes):
            port = free_port()
            options = ["--embedder", self.embedder, "--parent-pid", str(os.getpid())]  # stops with us
            if i > 0:
                options.append("--no-worker")  # one worker is enough for the benchmark's trainings
            elif self.worker == "in-process":
                options.append("--in-process-worker")
            # Every process encodes on its share of the cores, so together they do not oversubscribe them.
            options += ["--scoring-threads", str(max(1, (os.cpu_count() or 1) // self.processes))]
            cmd = serve_command(port, self.data_dir, *options, database_url=self.database_url)
            log = (self.data_dir / f"serve-{i}.log").open("wb")
            self.procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    env=service_env(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            self.ports.append(port)
            self._wait_healthy(i, timeout)  # one after another: the first runs the migrations

    def _wait_healthy(self, i: int, timeout: float) -> None:
        url = f"{self.base_urls[i]}/v1/health"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[i].poll() is not None:
                code = self.procs[i].returncode
                raise RuntimeError(f"service process {i} exited ({code}):\n{self.log_tail(i)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=2, trust_env=False).status_code == 200:
                    return
            time.sleep(0.25)
        raise RuntimeError(f"service process {i} not healthy after {timeout:.0f}s:\n{self.log_tail(i)}")

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the service processes so far (Linux /proc; None elsewhere)."""
        total = 0.0
        for proc in self.procs:
            try:
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (all threads)
        return total

    def log_tail(self, i: int, lines: int = 30) -> str:
        path = self.data_dir / f"serve-{i}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def http(self, key: str, timeout: float = 120) -> httpx.Client:
        """A client of the first API process with `key` (no proxy from the environment)."""
        headers = {"Authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.base_urls[0], headers=headers, timeout=timeout, trust_env=False)

    def create_key(self, namespace: str = NAMESPACE, scope: str = "authoring") -> str:
        return create_key(self.data_dir, namespace, scope, database_url=self.database_url, env=service_env())

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@contextlib.contextmanager
def running_service(
    database: str, embedder: str, processes: int = 1, worker: str = "child", start_timeout: float = 180.0
) -> Iterator[Service]:
    """The service on `database` ("sqlite" or "postgres"), stopped and removed on leaving."""
    with tempfile.TemporaryDirectory(prefix=f"load-{database}-") as tmp, contextlib.ExitStack() as stack:
        url = None
        if database == "postgres":
            url = stack.enter_context(PgCluster(database="bench")).url
        service = Service(Path(tmp), url, embedder, processes, worker)
        stack.callback(service.stop)
        service.start(start_timeout)
        yield service
