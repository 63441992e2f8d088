"""The service as a deployment runs it (harness.fleet's launcher), and what is measured while it runs:
the processes' memory, a writer's wait for the lock, the problems and slow writes in the logs."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg2

from core import contract
from harness.fleet import Fleet, fleet_env
from harness.pgcluster import PgCluster
from harness.processes import rss_mb
from harness.service import ROOT

RESULTS_DIR = ROOT / "benchmarks" / "results"
NAMESPACE = "scale"  # of the deployments' keys and models
# A benchmark's PostgreSQL keeps its writes durable (the test clusters turn fsync off); commits do not wait
# for the disk, as SQLite's synchronous=NORMAL in WAL mode does not.
PG_SETTINGS = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"}
# What must not appear in a log: the lock errors, and any error or traceback.
LOG_PROBLEMS = re.compile(
    r"database is locked|Traceback|\bERROR\b|\bCRITICAL\b|run recovery failed|heartbeat failed"
)
SLOW_WRITE = re.compile(r"held SQLite's write lock for ([\d.]+) s \(it began with (.*)\)")

# One core per worker process: each embeds on one thread (as the embedded service's worker child does), so N
# workers use N cores and the speedup is the deployment's, not onnxruntime's threads'.
ONE_THREAD = {
    k: "1" for k in ("SCORING_EMBEDDER_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}


def embedder_dir() -> Path:
    """Where the int8 embedders are built, once for every deployment of the run ($SCORING_EMBEDDER_DIR, or a
    benchmarks/.cache/embedders): building one takes a minute, which no measured step should include."""
    path = Path(os.environ.get("SCORING_EMBEDDER_DIR") or RESULTS_DIR.parent / ".cache" / "embedders")
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_embedder(name: str) -> None:
    """Build (or load) the embedder in `embedder_dir()` before any deployment starts."""
    os.environ["SCORING_EMBEDDER_DIR"] = str(embedder_dir())
    from core.embedders import get_embedder

    get_embedder(name).encode(["Warm-up: build the embedder once."])


#: The rate limits at their defaults, as environment overrides of a deployment.
LIMITS_ON = {
    "SCORING_SCORE_RATE_PER_S": str(contract.DEFAULT_SCORE_RATE_PER_S),
    "SCORING_WRITE_RATE_PER_S": str(contract.DEFAULT_WRITE_RATE_PER_S),
    "SCORING_IMPORT_RATE_PER_S": str(contract.DEFAULT_IMPORT_RATE_PER_S),
}


class Deployment(Fleet):
    """The service as a deployment runs it, on one database and data dir.

    `workers` = 0: the embedded setup (`serve`, whose worker child runs the background runs on one thread).
    `workers` = N: `serve --no-worker` and N `python -m service worker --workers 1` processes.
    Every process stops with the benchmark (`--parent-pid`).
    """

    def __init__(
        self, data_dir: Path, database_url: str | None, embedder: str, workers: int = 0, **env: str
    ) -> None:
        # One key drives the whole deployment here, which measures capacity: the per-key rate limits are off
        # (`**LIMITS_ON` turns them back to their defaults, to measure what a client meets).
        limits = dict.fromkeys(LIMITS_ON, "0")
        environ = fleet_env(
            data_dir, database_url, embedder, SCORING_EMBEDDER_DIR=str(embedder_dir()), **{**limits, **env}
        )
        parent = ["--parent-pid", str(os.getpid())]
        super().__init__(
            data_dir, environ, workers=workers, api_options=parent, worker_options=["--workers", "1", *parent]
        )

    @property
    def base_url(self) -> str:
        return f"{self.url()}/v1"

    @property
    def api_pid(self) -> int:
        return self.apis[0].pid

    def http(self, key: str) -> httpx.Client:
        """A client of the API with `key`; paths are relative to /v1."""
        headers = {"Authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=600, trust_env=False)

    def create_key(self, namespace: str = NAMESPACE, scope: str = "authoring") -> str:
        return super().create_key(namespace, scope)

    def worker_pids(self) -> list[int]:
        if self.workers:
            return [p.pid for p in self.workers if p.alive]
        return self.apis[0].descendants()  # the embedded worker child

    def memory(self) -> dict[str, float]:
        """RSS in MB of the API process and of the worker processes together."""
        return {"api": rss_mb(self.api_pid), "workers": sum(rss_mb(p) for p in self.worker_pids())}

    def _logs(self) -> list[Path]:
        return [p.log_path for p in self.procs if p.log_path.exists()]

    def log_problems(self) -> list[str]:
        lines = []
        for log in self._logs():
            for line in log.read_text(errors="replace").splitlines():
                if LOG_PROBLEMS.search(line):
                    lines.append(f"{log.stem}: {line.strip()[:300]}")
        return lines

    def slow_writes(self) -> dict[str, Any]:
        """The write transactions the service logged as holding SQLite's write lock for over a second."""
        held: list[tuple[float, str]] = []
        for log in self._logs():
            for m in SLOW_WRITE.finditer(log.read_text(errors="replace")):
                held.append((float(m.group(1)), m.group(2)))
        held.sort(reverse=True)
        return {"count": len(held), "longest": [f"{s:.1f} s: {what}" for s, what in held[:5]]}


@contextlib.contextmanager
def deployment(database: str, embedder: str, workers: int = 0, **env: str) -> Iterator[Deployment]:
    with (
        tempfile.TemporaryDirectory(prefix=f"scale-{database}-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        url = None
        if database == "postgres":
            url = stack.enter_context(PgCluster(database="scale", settings=PG_SETTINGS)).url
        dep = Deployment(Path(tmp), url, embedder, workers, **env)
        stack.callback(dep.stop)
        dep.ensure_running()
        yield dep


class MemorySampler:
    """Peak RSS of the API process and of the workers, per phase (sampled every 0.5 s)."""

    def __init__(self, dep: Deployment) -> None:
        self.dep = dep
        self.phase = "start"
        self.peaks: dict[str, dict[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            now = self.dep.memory()
            peak = self.peaks.setdefault(self.phase, {"api": 0.0, "workers": 0.0})
            for k, v in now.items():
                peak[k] = max(peak[k], round(v, 1))

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class LockProbe:
    """Every 0.25 s, how long a writer waits: SQLite, for the database's write lock (BEGIN IMMEDIATE, as every
    writer of the service begins); PostgreSQL, for the lock on the model's row (SELECT … FOR UPDATE, as every
    request that changes the model takes it)."""

    def __init__(self, database_url: str | None, data_dir: Path, handle: str) -> None:
        self.url = database_url
        self.path = data_dir / "scoring.sqlite"
        self.handle = handle
        self.waits_ms: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        if self.url is None:
            conn: Any = sqlite3.connect(self.path, timeout=120, isolation_level=None)

            def probe() -> None:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
        else:
            conn = psycopg2.connect(self.url)

            def probe() -> None:
                with conn.cursor() as cur:
                    cur.execute("SELECT id FROM models WHERE handle = %s FOR UPDATE", (self.handle,))
                conn.rollback()

        try:
            while not self._stop.wait(0.25):
                start = time.perf_counter()
                probe()
                self.waits_ms.append((time.perf_counter() - start) * 1000)
        finally:
            conn.close()

    def summary(self) -> dict[str, float]:
        w = sorted(self.waits_ms) or [0.0]
        return {
            "probes": len(self.waits_ms),
            "p50_ms": round(statistics.median(w), 1),
            "p99_ms": round(w[min(len(w) - 1, int(0.99 * len(w)))], 1),
            "max_ms": round(w[-1], 1),
        }

    def __enter__(self) -> LockProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=180)
