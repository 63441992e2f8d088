"""Scale benchmark: `python -m benchmarks.scale PART [--database sqlite|postgres|both] …`.

Every part starts the service as real processes on loopback (a temp data dir; SQLite in it, or a throwaway
PostgreSQL cluster from harness.pgcluster with fsync on), creates an authoring key with the CLI and
works through the HTTP API, as a user's script would. It samples the resident memory (RSS) of the API process
and of the worker processes, and at the end greps their logs for `database is locked`, tracebacks and errors.

- `imports`: one model, samples posted in batches of 500 (`--sizes 1000,10000,100000`, add 1000000 for the
  million), the hashing embedder (embedding is not the cost). At each size: the time to add them, the rate of
  10 batches posted once the model holds that many (5,000 samples more) and the API process's CPU per batch,
  a training, listing all samples 500 a page; then the model is reopened and filled on. A throwaway model
  takes 10 batches first, so the first size's rate is not the API process's first requests'. Pool texts
  (1,000 a request) and evaluation items (500) the same way, up to `--pool-sizes`. A probe meanwhile takes the
  write lock (SQLite: BEGIN IMMEDIATE) or the model row's lock (PostgreSQL: SELECT … FOR UPDATE) every 0.25 s
  and records how long it waited: how long any other writer waits behind the import. Target: the rate at each
  size >= 0.7x the rate at 1,000, and no error in the logs.

Results go to benchmarks/results/scale_<part>.json (with the machine), and a table to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import platform
import re
import secrets
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg2

from core import contract
from core.contract import DEFAULT_EMBEDDER, pole_of
from core.demo import demo_slugs, read_demo_model
from harness.datasets import datasets_dir
from harness.pgcluster import PgCluster
from harness.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
POLITENESS = ("wikipedia.annotated.csv", "stack-exchange.annotated.csv")  # in stanford_politeness/
NAMESPACE = "scale"
BATCH = contract.MAX_SAMPLES_PER_REQUEST  # samples a request (the API's maximum)
POOL_BATCH = contract.MAX_POOL_TEXTS_PER_REQUEST  # pool texts a request (the API's maximum)
RATE_BATCHES = 10  # the rate at a size: 10 batches (5,000 samples) posted once the model holds that many
TARGET_RATIO = 0.7
BOTH = ("polite", "long")  # the two traits of the larger models
# A benchmark's PostgreSQL keeps its writes durable (the test clusters turn fsync off); commits do not wait
# for the disk, as SQLite's synchronous=NORMAL in WAL mode does not.
PG_SETTINGS = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"}
# What must not appear in a log: the lock errors, and any error or traceback.
LOG_PROBLEMS = re.compile(
    r"database is locked|Traceback|\bERROR\b|\bCRITICAL\b|run recovery failed|heartbeat failed"
)
SLOW_WRITE = re.compile(r"held SQLite's write lock for ([\d.]+) s \(it began with (.*)\)")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# -- texts ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """The politeness requests (~10,900) and their pole (normalised score >= 0), read from ../shared/datasets;
    text i is request i mod n with its number appended, so every i is a distinct text of realistic length."""

    texts: list[str]
    poles: list[float]

    @classmethod
    def load(cls, source: str = "politeness") -> Corpus:
        """`politeness` (needs the datasets); `demo`: the demo models' samples of sample_data/ (about 560
        texts, their quality as the pole), for the benchmark's own tests on a clone without the datasets."""
        texts, poles = [], []
        if source == "demo":
            for slug in demo_slugs():
                for row in read_demo_model(slug).samples:
                    pole = pole_of(float(row["quality"]))
                    if pole != "neutral":  # on neither pole
                        texts.append(str(row["text"]).strip())
                        poles.append(float(pole == "positive"))
            return cls(texts, poles)
        for name in POLITENESS:
            with (datasets_dir() / "stanford_politeness" / name).open(newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    if row["Request"].strip():
                        texts.append(row["Request"].strip())
                        poles.append(1.0 if float(row["Normalized Score"]) >= 0 else 0.0)
        return cls(texts, poles)

    def text(self, i: int, kind: str = "sample") -> str:
        return f"{self.texts[i % len(self.texts)]} ({kind} {i})"

    def quality(self, i: int) -> float:
        return self.poles[i % len(self.poles)]

    def samples(self, start: int, n: int, traits: tuple[str, ...] = ("polite",)) -> list[dict[str, Any]]:
        """Samples start..start+n-1, their traits in turn: "polite" (the dataset's label) or "long" (the
        request is longer than 120 characters)."""
        out = []
        for i in range(start, start + n):
            trait = traits[i % len(traits)]
            long = len(self.texts[i % len(self.texts)]) > 120
            quality = (1.0 if long else 0.0) if trait == "long" else self.quality(i)
            out.append({"trait": trait, "text": self.text(i), "quality": quality})
        return out


# -- processes -----------------------------------------------------------------------------------------------


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


def _proc_stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (all its threads)."""
    fields = _proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else 0.0


def rss_mb(pid: int) -> float:
    fields = _proc_stat(pid)
    return int(fields[21]) * PAGE_SIZE / 2**20 if fields else 0.0


def children(pid: int) -> list[int]:
    """Every descendant of a process (Linux /proc)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*") if Path(f"/proc/{parent}").exists() else []:
            with contextlib.suppress(OSError):
                kids = [int(k) for k in (task / "children").read_text().split()]
                found += kids
                todo += kids
    return found


@dataclass
class Deployment:
    """The service as a deployment runs it, on one database and data dir.

    `workers` = 0: the embedded setup (`serve`, whose worker child runs the background runs on one thread).
    `workers` = N: `serve --no-worker` and N `python -m service worker --workers 1` processes.
    """

    data_dir: Path
    database_url: str | None
    embedder: str
    workers: int = 0
    env_extra: dict[str, str] = field(default_factory=dict)
    port: int = 0
    api: subprocess.Popen[bytes] | None = None
    worker_procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "PG"))}
        env.update(
            {
                "SCORING_DATA_DIR": str(self.data_dir),
                "SCORING_EMBEDDER": self.embedder,
                "SCORING_CURSOR_SECRET": self.secret,
                "PYTHONUNBUFFERED": "1",
                "HF_HUB_OFFLINE": "1",
            }
        )
        if self.database_url:
            env["SCORING_DATABASE_URL"] = self.database_url
        env["SCORING_EMBEDDER_DIR"] = str(embedder_dir())
        env.update(self.env_extra)
        return env

    def __post_init__(self) -> None:
        self.secret = secrets.token_hex(32)

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = self.data_dir / f"{name}.log"
        self.logs.append(log)
        with log.open("ab") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "service", *args],
                cwd=ROOT,
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start(self, timeout: float = 180.0) -> None:
        self.port = free_port()
        serve = ["serve", "--host", "127.0.0.1", "--port", str(self.port), "--parent-pid", str(os.getpid())]
        if self.workers:
            serve.append("--no-worker")
        self.api = self._spawn("api", serve)
        self._wait_healthy(timeout)
        for i in range(self.workers):  # after the API process, which migrated the database
            self.worker_procs.append(
                self._spawn(f"worker{i}", ["worker", "--workers", "1", "--parent-pid", str(os.getpid())])
            )
        deadline = time.monotonic() + timeout
        for i in range(self.workers):
            while "Scoring worker ready" not in (self.data_dir / f"worker{i}.log").read_text(
                errors="replace"
            ):
                if self.worker_procs[i].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"worker {i} did not start:\n{self.log_tail(f'worker{i}')}")
                time.sleep(0.2)

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        assert self.api is not None
        while time.monotonic() < deadline:
            if self.api.poll() is not None:
                raise RuntimeError(f"the API process exited:\n{self.log_tail('api')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/health", timeout=2, trust_env=False).status_code == 200:
                    return
            time.sleep(0.25)
        raise RuntimeError(f"the API process is not healthy after {timeout:.0f} s:\n{self.log_tail('api')}")

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.data_dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def cli(self, *args: str, timeout: float = 3600) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "service", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"service {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}"
            )
        return proc.stdout

    def create_key(self) -> str:
        return self.cli("keys", "create", "--namespace", NAMESPACE, "--scope", "authoring").split()[-1]

    def client(self, key: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=600, trust_env=False)

    @property
    def api_pid(self) -> int:
        assert self.api is not None
        return self.api.pid

    def worker_pids(self) -> list[int]:
        if self.workers:
            return [p.pid for p in self.worker_procs if p.poll() is None]
        return children(self.api_pid)  # the embedded worker child

    def memory(self) -> dict[str, float]:
        """RSS in MB of the API process and of the worker processes together."""
        return {"api": rss_mb(self.api_pid), "workers": sum(rss_mb(p) for p in self.worker_pids())}

    def log_problems(self) -> list[str]:
        lines = []
        for log in dict.fromkeys(self.logs):
            if log.exists():
                for line in log.read_text(errors="replace").splitlines():
                    if LOG_PROBLEMS.search(line):
                        lines.append(f"{log.stem}: {line.strip()[:300]}")
        return lines

    def slow_writes(self) -> dict[str, Any]:
        """The write transactions the service logged as holding SQLite's write lock for over a second."""
        held: list[tuple[float, str]] = []
        for log in dict.fromkeys(self.logs):
            if log.exists():
                for m in SLOW_WRITE.finditer(log.read_text(errors="replace")):
                    held.append((float(m.group(1)), m.group(2)))
        held.sort(reverse=True)
        return {"count": len(held), "longest": [f"{s:.1f} s: {what}" for s, what in held[:5]]}

    def stop(self) -> None:
        procs = [p for p in [self.api, *self.worker_procs] if p is not None]
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


@contextlib.contextmanager
def deployment(database: str, embedder: str, workers: int = 0, **env: str) -> Iterator[Deployment]:
    with (
        tempfile.TemporaryDirectory(prefix=f"scale-{database}-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        url = None
        if database == "postgres":
            url = stack.enter_context(PgCluster(database="scale", settings=PG_SETTINGS)).url
        dep = Deployment(Path(tmp), url, embedder, workers, dict(env))
        stack.callback(dep.stop)
        dep.start()
        yield dep


# -- measuring while something runs --------------------------------------------------------------------------


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


# -- API steps -----------------------------------------------------------------------------------------------


def ok(resp: httpx.Response, *expected: int) -> Any:
    if resp.status_code not in expected:
        raise RuntimeError(
            f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text[:500]}"
        )
    return resp.json()


def make_model(c: httpx.Client, handle: str, traits: list[str]) -> None:
    ok(c.post("/models", json={"handle": handle}), 201)
    body = {
        "traits": [{"name": t, "positive_label": f"{t}: yes", "negative_label": f"{t}: no"} for t in traits]
    }
    ok(c.post(f"/models/{handle}/traits", json=body), 201)


def wait_settled(c: httpx.Client, handle: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        model = ok(c.get(f"/models/{handle}"), 200)
        if model["state"] != "busy":
            return model
        if time.monotonic() > deadline:
            raise RuntimeError(f"{handle} still busy after {timeout:.0f} s: {model['last_operation']}")
        time.sleep(0.5)


def train(c: httpx.Client, handle: str, effort: str, timeout: float) -> float:
    """Seconds from the request to the model being ready."""
    return float(train_watched(c, handle, effort, timeout)["training_s"])


def train_watched(c: httpx.Client, handle: str, effort: str, timeout: float) -> dict[str, Any]:
    """Train and follow the run's progress every 0.5 s: the whole time, the embedding phase's, the last
    embedding message (texts and workers) and the largest number of workers seen holding a shard."""
    start = time.perf_counter()
    ok(c.post(f"/models/{handle}/train", json={"effort": effort}), 202)
    deadline = time.monotonic() + timeout
    embedding_until = None
    holders, message = 0, ""
    while True:
        model = ok(c.get(f"/models/{handle}"), 200)
        progress = (model.get("last_operation") or {}).get("progress") or {}
        if progress.get("phase") == "embedding":
            message = progress.get("message", "")
            if found := re.search(r"(\d+) worker", message):
                holders = max(holders, int(found.group(1)))
        elif embedding_until is None and progress.get("phase") not in (None, "queued", "starting"):
            embedding_until = time.perf_counter()
        if model["state"] != "busy":
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"{handle} still busy after {timeout:.0f} s: {model['last_operation']}")
        time.sleep(0.5)
    if model["state"] != "ready":
        raise RuntimeError(f"training failed: {json.dumps(model['last_operation'])}")
    end = time.perf_counter()
    return {
        "training_s": round(end - start, 1),
        "embedding_s": round((embedding_until or end) - start, 1),
        "last_embedding_message": message,
        "most_workers_on_shards": holders,
    }


def list_all(c: httpx.Client, path: str, limit: int = 500, **params: str) -> tuple[int, float]:
    """(items, seconds) of reading a keyset-paged list to its end."""
    start, count, cursor = time.perf_counter(), 0, None
    while True:
        page = ok(
            c.get(path, params={**params, "limit": limit, **({"cursor": cursor} if cursor else {})}), 200
        )
        count += len(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return count, time.perf_counter() - start


@dataclass
class BatchLog:
    """Per batch: wall seconds and the API process's CPU seconds."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def post(self, dep: Deployment, c: httpx.Client, path: str, body: dict[str, Any]) -> Any:
        """POST `body` (201 expected), timed."""
        cpu, start = cpu_seconds(dep.api_pid), time.perf_counter()
        out = ok(c.post(path, json=body), 201)
        self.wall.append(time.perf_counter() - start)
        self.cpu.append(cpu_seconds(dep.api_pid) - cpu)
        return out

    def rate(self, per_batch: int) -> dict[str, float]:
        wall, cpu = self.wall, self.cpu
        return {
            "rate_per_s": round(per_batch * len(wall) / sum(wall), 1),
            "batch_ms": round(1000 * statistics.median(wall), 1),
            "api_cpu_ms_per_batch": round(1000 * statistics.mean(cpu), 1),
        }


# -- part: imports -------------------------------------------------------------------------------------------


def fill(
    dep: Deployment,
    c: httpx.Client,
    handle: str,
    corpus: Corpus,
    start: int,
    size: int,
    log: BatchLog,
    traits: tuple[str, ...] = ("polite",),
) -> None:
    """Samples start..size-1 into the model, 500 a request."""
    while start < size:
        n = min(BATCH, size - start)
        log.post(dep, c, f"/models/{handle}/samples", {"samples": corpus.samples(start, n, traits)})
        start += n


def part_imports(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    with deployment(database, args.embedder, args.workers) as dep:
        return imports(dep, args, corpus)


def imports(dep: Deployment, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    handle = f"{NAMESPACE}.imports"
    c = dep.client(dep.create_key())
    make_model(c, handle, ["polite"])
    rows: list[dict[str, Any]] = []
    log = BatchLog()
    warm_up = f"{NAMESPACE}.warm-up"
    make_model(c, warm_up, ["polite"])
    fill(dep, c, warm_up, corpus, 0, RATE_BATCHES * BATCH, BatchLog())
    with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, handle) as probe:
        stored = 0
        for size in args.sizes:
            memory.phase = f"import {size}"
            probe_start = len(probe.waits_ms)
            fill(dep, c, handle, corpus, stored, size, log)
            held, at_size = max(stored, size), BatchLog()  # the rate at this size
            stored = held + RATE_BATCHES * BATCH
            fill(dep, c, handle, corpus, held, stored, at_size)
            waits = sorted(probe.waits_ms[probe_start:]) or [0.0]
            row: dict[str, Any] = {
                "samples": held,
                "adding_s": round(sum(log.wall), 1),  # to the size
                **at_size.rate(BATCH),
                "lock_wait_p99_ms": round(waits[min(len(waits) - 1, int(0.99 * len(waits)))], 1),
                "lock_wait_max_ms": round(waits[-1], 1),
            }
            if not args.skip_training:
                memory.phase = f"train {size}"
                row["training_s"] = round(train(c, handle, args.effort, args.train_timeout), 1)
            memory.phase = f"list {size}"
            count, listing_s = list_all(c, f"/models/{handle}/samples")
            row["listing_s"] = round(listing_s, 2)
            assert count == stored, (count, stored)
            if not args.skip_training:
                ok(c.post(f"/models/{handle}/reopen"), 200)
            row["memory_mb"] = {
                "import": memory.peaks.get(f"import {size}"),
                "train": memory.peaks.get(f"train {size}"),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            log.wall += at_size.wall
            log.cpu += at_size.cpu
        pool = part_pool_and_eval(dep, c, handle, args.pool_sizes, corpus, memory)
        lock = probe.summary()
    base = rows[0]["rate_per_s"]
    for row in rows:
        row["rate_vs_first"] = round(row["rate_per_s"] / base, 2)
    return {
        "samples": rows,
        **pool,
        "lock_probe": lock,
        "slow_writes": dep.slow_writes(),
        "log_problems": dep.log_problems(),
    }


def part_pool_and_eval(
    dep: Deployment, c: httpx.Client, handle: str, sizes: list[int], corpus: Corpus, memory: MemorySampler
) -> dict[str, Any]:
    """Pool texts (1,000 a request) and evaluation items (500) up to each size, then the rate at that size: 5
    pool batches, 10 evaluation batches (5,000 texts each)."""
    pool_rows, eval_rows = [], []
    stored_pool = stored_eval = 0

    def add_pool(done: int, upto: int, log: BatchLog) -> int:
        while done < upto:
            texts = [corpus.text(i, "pool") for i in range(done, done + POOL_BATCH)]
            log.post(dep, c, f"/models/{handle}/pool", {"texts": texts})
            done += POOL_BATCH
        return done

    def add_items(done: int, upto: int, log: BatchLog) -> int:
        while done < upto:
            items = [
                {"trait": "polite", "text": corpus.text(i, "held-out"), "quality": corpus.quality(i)}
                for i in range(done, done + BATCH)
            ]
            log.post(dep, c, f"/models/{handle}/evaluation-set", {"items": items})
            done += BATCH
        return done

    for size in sizes:
        memory.phase = f"pool {size}"
        stored_pool = add_pool(stored_pool, max(size, stored_pool), BatchLog())
        at_size = BatchLog()
        stored_pool = add_pool(stored_pool, stored_pool + RATE_BATCHES * BATCH, at_size)
        pool_rows.append({"texts": stored_pool - RATE_BATCHES * BATCH, **at_size.rate(POOL_BATCH)})
        stored_eval = add_items(stored_eval, max(size, stored_eval), BatchLog())
        at_size = BatchLog()
        stored_eval = add_items(stored_eval, stored_eval + RATE_BATCHES * BATCH, at_size)
        eval_rows.append({"items": stored_eval - RATE_BATCHES * BATCH, **at_size.rate(BATCH)})
        print(json.dumps({"pool": pool_rows[-1], "evaluation": eval_rows[-1]}), flush=True)
    for rows in (pool_rows, eval_rows):
        for row in rows:
            row["rate_vs_first"] = round(row["rate_per_s"] / rows[0]["rate_per_s"], 2)
    return {"pool": pool_rows, "evaluation_items": eval_rows}


def table_imports(result: dict[str, Any]) -> str:
    lines = [
        "| samples in the model | adding them | rate at that size | × the rate at the first size "
        "| API CPU a batch | training (hashing) | listing all, 500 a page | writer's wait p99 / max "
        "| RSS API / worker |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["samples"]:
        mem = r["memory_mb"]["train"] or {}
        lines.append(
            f"| {r['samples']:,} | {r['adding_s']:,} s | {r['rate_per_s']:,} /s | {r['rate_vs_first']} | "
            f"{r['api_cpu_ms_per_batch']} ms | {r.get('training_s', '–')} s | {r['listing_s']} s | "
            f"{r['lock_wait_p99_ms']} / {r['lock_wait_max_ms']} ms | "
            f"{mem.get('api', 0):.0f} / {mem.get('workers', 0):.0f} MB |"
        )
    return "\n".join(lines)


# -- part: speedup -------------------------------------------------------------------------------------------

# One core per worker process: each embeds on one thread (as the embedded service's worker child does), so N
# workers use N cores and the speedup is the deployment's, not onnxruntime's threads'.
ONE_THREAD = {
    k: "1" for k in ("SCORING_EMBEDDER_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}


def part_speedup(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """A training of `--samples` samples with `--embedder` (the default embedder: embedding is the cost) on a
    fresh deployment (nothing cached) with each worker count of `--worker-counts`."""
    rows = []
    for workers in args.worker_counts:
        with deployment(database, args.embedder, workers, **ONE_THREAD) as dep:
            handle = f"{NAMESPACE}.speedup"
            c = dep.client(dep.create_key())
            make_model(c, handle, ["polite"])
            fill(dep, c, handle, corpus, 0, args.samples, BatchLog())
            with MemorySampler(dep) as memory:
                memory.phase = "train"
                watched = train_watched(c, handle, args.effort, args.train_timeout)
            shards_by_worker = [
                log.read_text(errors="replace").count("embedding shard")
                for log in sorted(dep.data_dir.glob("worker*.log"))
            ]
            row = {
                "workers": workers,
                "samples": args.samples,
                **watched,
                "shards_taken_by_message": shards_by_worker,
                "memory_mb": memory.peaks.get("train"),
                "log_problems": dep.log_problems(),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    for row in rows:
        row["speedup"] = round(rows[0]["training_s"] / row["training_s"], 2)
        row["embedding_speedup"] = round(rows[0]["embedding_s"] / row["embedding_s"], 2)
    return {"trainings": rows}


def table_speedup(result: dict[str, Any]) -> str:
    lines = [
        row("workers", "samples", "training", "embedding phase", "× faster (training / embedding)",
            "shards taken by message per worker", "RSS of the workers"),
        "|---:|---:|---:|---:|---:|---|---:|",
    ]  # fmt: skip
    for r in result["trainings"]:
        workers_mb = (r["memory_mb"] or {}).get("workers", 0)
        lines.append(
            row(r["workers"], f"{r['samples']:,}", f"{r['training_s']} s", f"{r['embedding_s']} s",
                f"{r['speedup']} / {r['embedding_speedup']}", r["shards_taken_by_message"],
                f"{workers_mb:.0f} MB")
        )  # fmt: skip
    return "\n".join(lines)


def row(*cells: Any) -> str:
    """One markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


# -- part: million -------------------------------------------------------------------------------------------


def timed(f: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """(median seconds, the last result) of `repeat` calls."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3), out


def part_million(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """One model of `--samples` samples (two traits), `--workers` worker processes, `--embedder`: import,
    training (sharded), the Samples page's reads, export, flags on a part; a second model of `--pool-labels`
    samples and `--pool` pool texts: label suggestions; backup of it all."""
    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        return million(dep, args, corpus)


def million(dep: Deployment, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    from core.client import Client

    handle = f"{NAMESPACE}.million"
    key = dep.create_key()
    c = dep.client(key)
    make_model(c, handle, list(BOTH))
    out: dict[str, Any] = {"samples": args.samples, "pool_texts": args.pool, "workers": args.workers}
    log = BatchLog()
    with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, handle) as probe:
        memory.phase = "import"
        checkpoints = []
        stored = 0
        for size in sorted({1_000, *[x for x in (10_000, 100_000) if x < args.samples], args.samples}):
            fill(dep, c, handle, corpus, stored, size, log, BOTH)
            held, at_size = max(stored, size), BatchLog()  # the rate at this size
            stored = held + RATE_BATCHES * BATCH
            fill(dep, c, handle, corpus, held, stored, at_size, BOTH)
            checkpoints.append({"samples": held, "adding_s": round(sum(log.wall), 1), **at_size.rate(BATCH)})
            log.wall += at_size.wall
            log.cpu += at_size.cpu
            print(json.dumps(checkpoints[-1]), flush=True)
        for row in checkpoints:
            row["rate_vs_first"] = round(row["rate_per_s"] / checkpoints[0]["rate_per_s"], 2)
        out["import"] = {
            "checkpoints": checkpoints,
            "lock_wait": probe.summary(),
            "memory_mb": memory.peaks.get("import"),
        }

        memory.phase = "train"
        out["training"] = {**train_watched(c, handle, args.effort, args.train_timeout), "memory_mb": None}
        out["training"]["memory_mb"] = memory.peaks.get("train")
        print(json.dumps(out["training"]), flush=True)

        memory.phase = "reads"
        client = Client(dep.base_url.removesuffix("/v1"), key, timeout=3600)
        reads: dict[str, float] = {}
        reads["get_model_s"], model = timed(lambda: client.get_model(handle), 5)
        assert model.sample_count == stored, (model.sample_count, stored)
        reads["traits_s"], _ = timed(lambda: client.list_traits(handle), 5)
        reads["first_page_s"], page = timed(lambda: client.list_samples_page(handle, limit=100), 5)
        reads["trait_filter_s"], _ = timed(lambda: client.list_samples_page(handle, "long", limit=100), 5)
        reads["provenance_filter_s"], _ = timed(
            lambda: client.list_samples_page(handle, provenance="feedback", limit=100), 5
        )
        reads["next_page_s"], _ = timed(
            lambda: client.list_samples_page(handle, limit=100, cursor=page.next_cursor), 5
        )
        reads["model_list_s"], _ = timed(lambda: list(client.list_models(namespace=NAMESPACE)), 5)
        out["samples_page"] = reads
        print(json.dumps(reads), flush=True)

        memory.phase = "export"
        start = time.perf_counter()
        exported = sum(1 for _ in client.list_samples(handle, page_size=500))
        out["export"] = {"samples": exported, "seconds": round(time.perf_counter() - start, 1)}
        print(json.dumps(out["export"]), flush=True)

        out["flags"] = flags_growth(client, handle, args.flags_sizes)

        # Suggestions as a labeller meets them: a model of a few thousand labels and a big pool.
        memory.phase = "pool"
        pool_handle = f"{NAMESPACE}.pool"
        make_model(c, pool_handle, list(BOTH))
        fill(dep, c, pool_handle, corpus, 0, args.pool_labels, BatchLog(), BOTH)
        pool_log = BatchLog()
        for start in range(0, args.pool, POOL_BATCH):
            texts = [corpus.text(i, "pool") for i in range(start, min(args.pool, start + POOL_BATCH))]
            pool_log.post(dep, c, f"/models/{pool_handle}/pool", {"texts": texts})
        out["pool_import"] = {
            "texts": args.pool,
            "labels": args.pool_labels,
            "seconds": round(sum(pool_log.wall), 1),
            **BatchLog(pool_log.wall[-RATE_BATCHES // 2 :], pool_log.cpu[-RATE_BATCHES // 2 :]).rate(
                POOL_BATCH
            ),
        }
        memory.phase = "suggest"
        first_s, first = timed(lambda: client.suggest(pool_handle, "polite", k=10))
        again_s, _ = timed(lambda: client.suggest(pool_handle, "polite", k=10), 3)
        out["suggest"] = {"first_s": first_s, "again_s": again_s, "pool_size": first.pool_size}
        print(json.dumps({"pool_import": out["pool_import"], "suggest": out["suggest"]}), flush=True)

        memory.phase = "backup"
        target = dep.data_dir / "backup"
        seconds, _ = timed(lambda: dep.cli("backup", str(target), timeout=6 * 3600))
        size_mb = sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) / 2**20
        out["backup"] = {"seconds": seconds, "size_mb": round(size_mb)}
        print(json.dumps(out["backup"]), flush=True)
        out["lock_wait"] = probe.summary()
    out["memory_mb"] = memory.peaks
    out["slow_writes"] = dep.slow_writes()
    out["log_problems"] = dep.log_problems()
    return out


def flags_growth(client: Any, handle: str, sizes: list[int]) -> dict[str, Any]:
    """The Flags tab's check (the workbench reads every sample, then runs core.engine.flags locally) on the
    first N samples of one trait, with the hashing embedder (so the engine's own cost shows): it grows with
    the square of the samples (each is compared with every other), which says where a million stands."""
    from core.embedders import get_embedder
    from core.engine.flags import flag_samples

    rows = []
    embedder = get_embedder("hashing")
    for n in sizes:
        samples = []
        for x in client.list_samples(handle, trait="polite", page_size=500):
            samples.append(x.model_dump(mode="json"))
            if len(samples) == n:
                break
        start = time.perf_counter()
        flagged = flag_samples(samples, embedder)
        rows.append({"samples": n, "seconds": round(time.perf_counter() - start, 1), "flags": len(flagged)})
        print(json.dumps({"flags": rows[-1]}), flush=True)
    return {"by_size": rows}


def table_million(result: dict[str, Any]) -> str:
    imp = result["import"]["checkpoints"]
    tr, reads, sug, bak = result["training"], result["samples_page"], result["suggest"], result["backup"]
    page = ("get_model_s", "traits_s", "first_page_s", "trait_filter_s", "provenance_filter_s", "next_page_s")
    lines = [
        row("step", "figure"),
        "|---|---:|",
        *(row(f"import: rate at {r['samples']:,}",
              f"{r['rate_per_s']:,} /s ({r['rate_vs_first']}×)") for r in imp),
        row(f"import: {result['samples']:,} samples", f"{imp[-1]['adding_s']:,} s"),  # to the last size
        row(f"training, {result['workers']} workers (embedding phase)",
            f"{tr['training_s']:,} s ({tr['embedding_s']:,} s)"),
        row("Samples page: model / traits / first page / trait filter / provenance filter / next page",
            " / ".join(str(reads[k]) for k in page) + " s"),
        row("model listing", f"{reads['model_list_s']} s"),
        row("export (every sample, 500 a page)", f"{result['export']['seconds']:,} s"),
        *(row(f"flags on {r['samples']:,} samples (hashing)", f"{r['seconds']} s")
          for r in result["flags"]["by_size"]),
        row(f"pool import: {result['pool_texts']:,} texts", f"{result['pool_import']['seconds']:,} s"),
        row("pool import: rate of the last batches", f"{result['pool_import']['rate_per_s']:,} /s"),
        row(f"suggestions from the pool ({result['pool_import']['labels']:,} labels): first / again",
            f"{sug['first_s']} / {sug['again_s']} s"),
        row("backup", f"{bak['seconds']} s, {bak['size_mb']:,} MB"),
        *(row(f"peak RSS, {phase}: API / workers", f"{m['api']:.0f} / {m['workers']:.0f} MB")
          for phase, m in result["memory_mb"].items()),
    ]  # fmt: skip
    return "\n".join(lines)


# -- part: models --------------------------------------------------------------------------------------------


def part_models(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """`--models` trained models of 40 samples each (two traits), then scoring spread over all of them from 8
    concurrent clients, memory, and listing the models."""
    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        key = dep.create_key()
        c = dep.client(key)
        out: dict[str, Any] = {"models": args.models}
        with MemorySampler(dep) as memory:
            memory.phase = "create"
            start = time.perf_counter()
            handles = [f"{NAMESPACE}.m{i:05d}" for i in range(args.models)]
            for i, handle in enumerate(handles):
                make_model(c, handle, list(BOTH))
                rows = corpus.samples(i * 40, 40, BOTH)
                ok(c.post(f"/models/{handle}/samples", json={"samples": rows}), 201)
                ok(c.post(f"/models/{handle}/train", json={"effort": "low"}), 202)
            for handle in handles:
                wait_settled(c, handle, args.train_timeout)
            out["create_and_train_s"] = round(time.perf_counter() - start, 1)
            memory.phase = "list"
            out["list_s"], listed = timed(lambda: list_all(c, "/models", limit=250, namespace=NAMESPACE), 3)
            assert listed[0] >= args.models
            memory.phase = "score"
            out["scoring"] = score_spread(dep, key, handles, corpus, args.requests)
        out["memory_mb"] = memory.peaks
        out["log_problems"] = dep.log_problems()
        return out


def score_spread(
    dep: Deployment, key: str, handles: list[str], corpus: Corpus, requests: int
) -> dict[str, Any]:
    """`requests` score requests, each on a model drawn at random, from 8 threads: latency percentiles."""
    import random
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(0)
    plan = [(rng.choice(handles), corpus.text(1_000_000 + i, "scored")) for i in range(requests)]
    latencies: list[float] = []
    errors = 0

    def one(item: tuple[str, str]) -> None:
        nonlocal errors
        handle, text = item
        with dep.client(key) as c:
            start = time.perf_counter()
            resp = c.post(f"/models/{handle}/score", json={"content": text})
            latencies.append((time.perf_counter() - start) * 1000)
            errors += resp.status_code != 200

    start = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, plan))
    seconds = time.perf_counter() - start
    lat = sorted(latencies)
    return {
        "requests": requests,
        "errors": errors,
        "throughput_rps": round(requests / seconds, 1),
        "p50_ms": round(lat[len(lat) // 2], 1),
        "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
    }


def table_models(result: dict[str, Any]) -> str:
    sc, mem = result["scoring"], result["memory_mb"]
    return "\n".join(
        [
            row("models", "create + train", "scoring p50 / p99 (8 clients, random model)", "errors",
                "list all", "RSS API after scoring"),
            "|---:|---:|---:|---:|---:|---:|",
            row(f"{result['models']:,}", f"{result['create_and_train_s']:,} s",
                f"{sc['p50_ms']} / {sc['p99_ms']} ms", sc["errors"], f"{result['list_s']} s",
                f"{mem['score']['api']:.0f} MB"),
        ]
    )  # fmt: skip


# -- part: mixed ---------------------------------------------------------------------------------------------


def part_mixed(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """`--minutes` of importers (batches of 500 into growing models), trainers (train, reopen, add, train
    again) and scorers at once, on `--workers` worker processes; every answer outside the expected statuses
    counts as an error, and the logs are grepped at the end."""
    import random

    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        key = dep.create_key()
        c = dep.client(key)
        scored = [f"{NAMESPACE}.scored{i}" for i in range(4)]
        for i, handle in enumerate(scored):
            make_model(c, handle, ["polite"])
            ok(c.post(f"/models/{handle}/samples", json={"samples": corpus.samples(i * 200, 200)}), 201)
            train(c, handle, "low", args.train_timeout)
        deadline = time.monotonic() + 60 * args.minutes
        counts: dict[str, int] = {}
        errors: list[str] = []
        lock = threading.Lock()

        def note(kind: str, resp: httpx.Response, *expected: int) -> None:
            with lock:
                counts[kind] = counts.get(kind, 0) + 1
                if resp.status_code not in expected:
                    errors.append(f"{kind}: {resp.status_code} {resp.text[:200]}")

        def importer(n: int) -> None:
            handle = f"{NAMESPACE}.import{n}"
            with dep.client(key) as cl:
                make_model(cl, handle, ["polite"])
                i = 0
                while time.monotonic() < deadline:
                    body = {"samples": corpus.samples(10_000_000 * (n + 1) + i, BATCH)}
                    note("import", cl.post(f"/models/{handle}/samples", json=body), 201)
                    i += BATCH

        def trainer(n: int) -> None:
            handle = f"{NAMESPACE}.train{n}"
            with dep.client(key) as cl:
                make_model(cl, handle, ["polite"])
                i = 0
                while time.monotonic() < deadline:
                    body = {"samples": corpus.samples(50_000_000 * (n + 1) + i, BATCH)}
                    note("train-add", cl.post(f"/models/{handle}/samples", json=body), 201)
                    i += BATCH
                    note("train", cl.post(f"/models/{handle}/train", json={"effort": "low"}), 202)
                    model = wait_settled(cl, handle, args.train_timeout)
                    with lock:
                        if model["state"] != "ready":
                            errors.append(f"train: {model['state']} {model['last_operation']}")
                    note("reopen", cl.post(f"/models/{handle}/reopen"), 200)

        def scorer(n: int) -> None:
            rng = random.Random(n)
            with dep.client(key) as cl:
                i = 0
                while time.monotonic() < deadline:
                    body = {"content": corpus.text(90_000_000 + 1_000_000 * n + i, "scored")}
                    note("score", cl.post(f"/models/{rng.choice(scored)}/score", json=body), 200)
                    i += 1

        threads = [
            *(threading.Thread(target=importer, args=(n,)) for n in range(args.importers)),
            *(threading.Thread(target=trainer, args=(n,)) for n in range(args.trainers)),
            *(threading.Thread(target=scorer, args=(n,)) for n in range(args.scorers)),
        ]
        with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, scored[0]) as probe:
            memory.phase = "mixed"
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return {
            "minutes": args.minutes,
            "requests": counts,
            "errors": len(errors),
            "first_errors": errors[:10],
            "lock_wait": probe.summary(),
            "slow_writes": dep.slow_writes(),
            "memory_mb": memory.peaks.get("mixed"),
            "log_problems": dep.log_problems(),
        }


def table_mixed(result: dict[str, Any]) -> str:
    mem, wait = result["memory_mb"] or {}, result["lock_wait"]
    return "\n".join(
        [
            row("minutes", "requests by kind", "errors", "problem lines in the logs",
                "writer's wait p99 / max", "RSS API / workers"),
            "|---:|---|---:|---:|---:|---:|",
            row(result["minutes"], result["requests"], result["errors"], len(result["log_problems"]),
                f"{wait['p99_ms']} / {wait['max_ms']} ms",
                f"{mem.get('api', 0):.0f} / {mem.get('workers', 0):.0f} MB"),
        ]
    )  # fmt: skip


# -- driver --------------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_at_start": [round(x, 2) for x in load],
    }


def sizes(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


Part = Callable[[str, argparse.Namespace, Corpus], dict[str, Any]]
PARTS: dict[str, tuple[Part, Callable[[dict[str, Any]], str]]] = {
    "imports": (part_imports, table_imports),
    "speedup": (part_speedup, table_speedup),
    "million": (part_million, table_million),
    "models": (part_models, table_models),
    "mixed": (part_mixed, table_mixed),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=sorted(PARTS))
    p.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    p.add_argument(
        "--corpus",
        choices=("politeness", "demo"),
        default="politeness",
        help="texts: the politeness requests (../shared/datasets) or sample_data's demo models",
    )
    p.add_argument("--embedder", help="default: hashing for imports, the service's default for the others")
    p.add_argument(
        "--workers", type=int, help="worker processes (0: the embedded worker child); default per part"
    )
    p.add_argument("--effort", default="low", help="training effort")
    p.add_argument("--train-timeout", type=float, default=12 * 3600)
    p.add_argument("--output", type=Path, help="default benchmarks/results/scale_<part>.json")
    g = p.add_argument_group("imports")
    g.add_argument("--sizes", type=sizes, default=sizes("1000,10000,100000"), help="samples in the model")
    g.add_argument("--pool-sizes", type=sizes, default=sizes("1000,10000,100000"), help="pool texts / items")
    g.add_argument("--skip-training", action="store_true", help="no training at each size (rates only)")
    g = p.add_argument_group("speedup and million")
    g.add_argument("--samples", type=int, default=25_000, help="samples in the model")
    g.add_argument("--worker-counts", type=sizes, default=sizes("1,2"), help="speedup: worker processes")
    g.add_argument("--pool", type=int, default=1_000_000, help="million: pool texts")
    g.add_argument("--pool-labels", type=int, default=2_000, help="million: labels of the pool's model")
    g.add_argument(
        "--flags-sizes", type=sizes, default=sizes("2000,8000"), help="million: flags on this many"
    )
    g = p.add_argument_group("models")
    g.add_argument("--models", type=int, default=5_000)
    g.add_argument("--requests", type=int, default=4_000, help="score requests")
    g = p.add_argument_group("mixed")
    g.add_argument("--minutes", type=float, default=30.0)
    g.add_argument("--importers", type=int, default=2)
    g.add_argument("--trainers", type=int, default=2)
    g.add_argument("--scorers", type=int, default=4)
    args = p.parse_args(argv)
    # A SIGTERM (kill, a CI timeout) ends the run like Ctrl-C: the deployments are stopped, the temp dirs go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.embedder is None:
        args.embedder = "hashing" if args.part == "imports" else DEFAULT_EMBEDDER
    if args.workers is None:
        args.workers = 0 if args.part == "imports" else 2
    run, table = PARTS[args.part]
    corpus = Corpus.load(args.corpus)
    build_embedder(args.embedder)
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    output = args.output or RESULTS_DIR / f"scale_{args.part}.json"
    results: dict[str, Any] = {
        "part": args.part,
        "args": {k: str(v) for k, v in vars(args).items()},
        "machine": machine(),
    }
    for database in databases:
        results[database] = run(database, args, corpus)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\n{database}:\n{table(results[database])}\n", flush=True)
        if slow := results[database].get("slow_writes"):
            print(f"slow write transactions: {slow}", flush=True)
        if problems := results[database].get("log_problems"):
            print(f"{len(problems)} problem line(s) in the logs, first: {problems[:5]}", flush=True)
    results["machine"]["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
