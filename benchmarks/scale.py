"""Scale benchmark (issue 36): `python -m benchmarks.scale PART [--database sqlite|postgres|both] …`.

Every part starts the service as real processes on loopback (a temp data dir; SQLite in it, or a throwaway
PostgreSQL cluster from tests.support.pgcluster with fsync on), creates an authoring key with the CLI and
works through the HTTP API, as a user's script would. It samples the resident memory (RSS) of the API process
and of the worker processes, and at the end greps their logs for `database is locked`, tracebacks and errors.

- `imports`: one model, samples posted in batches of 500 (`--sizes 1000,10000,100000`, add 1000000 for the
  million), the hashing embedder (embedding is not the cost). At each size: the time to add them, the rate of
  the last 10 batches (5,000 samples; all of them below that) and the API process's CPU per batch, a training,
  listing all samples 500 a page; then the model is reopened and filled on. Pool texts (1,000 a request) and
  evaluation items (500) the same way, up to `--pool-sizes`. A probe meanwhile takes the write lock (SQLite:
  BEGIN IMMEDIATE) or the model row's lock (PostgreSQL: SELECT … FOR UPDATE) every 0.25 s and records how long
  it waited: how long any other writer waits behind the import. Target: the rate at each size >= 0.7x the
  rate at 1,000, and no error in the logs.

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

from tests.support.pgcluster import PgCluster, free_port

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
# ../shared/datasets beside the checkout (or beside the worktrees' parent); SCORING_DATASETS wins.
DATASETS = Path(
    os.environ.get("SCORING_DATASETS")
    or next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), "")
)
POLITENESS = [
    DATASETS / "stanford_politeness" / "wikipedia.annotated.csv",
    DATASETS / "stanford_politeness" / "stack-exchange.annotated.csv",
]
NAMESPACE = "scale"
BATCH = 500  # samples a request (the API's maximum)
POOL_BATCH = 1000  # pool texts a request (the API's maximum)
LAST_BATCHES = 10  # the rate "of the last batches": the 10 before a size (5,000 samples)
TARGET_RATIO = 0.7
# A benchmark's PostgreSQL keeps its writes durable (the test clusters turn fsync off); commits do not wait
# for the disk, as SQLite's synchronous=NORMAL in WAL mode does not.
PG_SETTINGS = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"}
# What must not appear in a log: the lock errors, and any error or traceback.
LOG_PROBLEMS = re.compile(
    r"database is locked|Traceback|\bERROR\b|\bCRITICAL\b|run recovery failed|heartbeat failed"
)
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
    def load(cls) -> Corpus:
        texts, poles = [], []
        for path in POLITENESS:
            with path.open(newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    if row["Request"].strip():
                        texts.append(row["Request"].strip())
                        poles.append(1.0 if float(row["Normalized Score"]) >= 0 else 0.0)
        return cls(texts, poles)

    def text(self, i: int, kind: str = "sample") -> str:
        return f"{self.texts[i % len(self.texts)]} ({kind} {i})"

    def quality(self, i: int) -> float:
        return self.poles[i % len(self.poles)]

    def samples(self, start: int, n: int, trait: str = "polite") -> list[dict[str, Any]]:
        return [
            {"trait": trait, "text": self.text(i), "quality": self.quality(i)}
            for i in range(start, start + n)
        ]


# -- processes -----------------------------------------------------------------------------------------------


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
    start = time.perf_counter()
    ok(c.post(f"/models/{handle}/train", json={"effort": effort}), 202)
    model = wait_settled(c, handle, timeout)
    if model["state"] != "ready":
        raise RuntimeError(f"training failed: {json.dumps(model['last_operation'])}")
    return time.perf_counter() - start


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

    def last(self, per_batch: int, batches: int = LAST_BATCHES) -> dict[str, float]:
        wall, cpu = self.wall[-batches:], self.cpu[-batches:]
        return {
            "rate_per_s": round(per_batch * len(wall) / sum(wall), 1),
            "batch_ms": round(1000 * statistics.median(wall), 1),
            "api_cpu_ms_per_batch": round(1000 * statistics.mean(cpu), 1),
        }


# -- part: imports -------------------------------------------------------------------------------------------


def part_imports(dep: Deployment, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    handle = f"{NAMESPACE}.imports"
    key = dep.create_key()
    c = dep.client(key)
    make_model(c, handle, ["polite"])
    rows: list[dict[str, Any]] = []
    log = BatchLog()
    added_s = 0.0
    with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, handle) as probe:
        stored = 0
        for size in args.sizes:
            memory.phase = f"import {size}"
            probe_start = len(probe.waits_ms)
            while stored < size:
                n = min(BATCH, size - stored)
                batch = corpus.samples(stored, n)
                start = time.perf_counter()
                log.post(dep, c, f"/models/{handle}/samples", {"samples": batch})
                added_s += time.perf_counter() - start
                stored += n
            waits = sorted(probe.waits_ms[probe_start:]) or [0.0]
            row: dict[str, Any] = {
                "samples": size,
                "adding_s": round(added_s, 1),
                **log.last(BATCH),
                "lock_wait_p99_ms": round(waits[min(len(waits) - 1, int(0.99 * len(waits)))], 1),
                "lock_wait_max_ms": round(waits[-1], 1),
            }
            memory.phase = f"train {size}"
            row["training_s"] = round(train(c, handle, args.effort, args.train_timeout), 1)
            memory.phase = f"list {size}"
            count, row["listing_s"] = list_all(c, f"/models/{handle}/samples")
            row["listing_s"] = round(row["listing_s"], 2)
            assert count == size, (count, size)
            ok(c.post(f"/models/{handle}/reopen"), 200)
            row["memory_mb"] = {
                "import": memory.peaks.get(f"import {size}"),
                "train": memory.peaks.get(f"train {size}"),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        pool = part_pool_and_eval(dep, c, handle, args.pool_sizes, corpus, memory)
        lock = probe.summary()
    base = rows[0]["rate_per_s"]
    for row in rows:
        row["rate_vs_first"] = round(row["rate_per_s"] / base, 2)
    return {"samples": rows, **pool, "lock_probe": lock, "log_problems": dep.log_problems()}


def part_pool_and_eval(
    dep: Deployment, c: httpx.Client, handle: str, sizes: list[int], corpus: Corpus, memory: MemorySampler
) -> dict[str, Any]:
    """Pool texts (1,000 a request) and evaluation items (500) up to each size: the last batches' rate."""
    pool_rows, eval_rows = [], []
    pool_log, eval_log = BatchLog(), BatchLog()
    stored_pool = stored_eval = 0
    for size in sizes:
        memory.phase = f"pool {size}"
        while stored_pool < size:
            texts = [corpus.text(i, "pool") for i in range(stored_pool, stored_pool + POOL_BATCH)]
            pool_log.post(dep, c, f"/models/{handle}/pool", {"texts": texts})
            stored_pool += POOL_BATCH
        pool_rows.append({"texts": size, **pool_log.last(POOL_BATCH, batches=LAST_BATCHES // 2)})
        while stored_eval < size:
            items = [
                {"trait": "polite", "text": corpus.text(i, "held-out"), "quality": corpus.quality(i)}
                for i in range(stored_eval, stored_eval + BATCH)
            ]
            eval_log.post(dep, c, f"/models/{handle}/evaluation-set", {"items": items})
            stored_eval += BATCH
        eval_rows.append({"items": size, **eval_log.last(BATCH)})
        print(json.dumps({"pool": pool_rows[-1], "evaluation": eval_rows[-1]}), flush=True)
    for rows in (pool_rows, eval_rows):
        for row in rows:
            row["rate_vs_first"] = round(row["rate_per_s"] / rows[0]["rate_per_s"], 2)
    return {"pool": pool_rows, "evaluation_items": eval_rows}


def table_imports(result: dict[str, Any]) -> str:
    lines = [
        "| samples in the model | adding them | rate of the last batches | × the rate at the first size "
        "| API CPU a batch | training (hashing) | listing all, 500 a page | writer's wait p99 / max "
        "| RSS API / worker |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["samples"]:
        mem = r["memory_mb"]["train"] or {}
        lines.append(
            f"| {r['samples']:,} | {r['adding_s']:,} s | {r['rate_per_s']:,} /s | {r['rate_vs_first']} | "
            f"{r['api_cpu_ms_per_batch']} ms | {r['training_s']} s | {r['listing_s']} s | "
            f"{r['lock_wait_p99_ms']} / {r['lock_wait_max_ms']} ms | "
            f"{mem.get('api', 0):.0f} / {mem.get('workers', 0):.0f} MB |"
        )
    return "\n".join(lines)


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


PARTS: dict[
    str,
    tuple[
        Callable[[Deployment, argparse.Namespace, Corpus], dict[str, Any]], Callable[[dict[str, Any]], str]
    ],
] = {
    "imports": (part_imports, table_imports),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=sorted(PARTS))
    p.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    p.add_argument("--sizes", type=sizes, default=sizes("1000,10000,100000"), help="samples in the model")
    p.add_argument("--pool-sizes", type=sizes, default=sizes("1000,10000,100000"), help="pool texts / items")
    p.add_argument("--effort", default="low", help="training effort (imports part)")
    p.add_argument("--train-timeout", type=float, default=6 * 3600)
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--workers", type=int, default=0, help="worker processes (0: the embedded worker child)")
    p.add_argument("--output", type=Path, help="default benchmarks/results/scale_<part>.json")
    args = p.parse_args(argv)
    run, table = PARTS[args.part]
    corpus = Corpus.load()
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    output = args.output or RESULTS_DIR / f"scale_{args.part}.json"
    results: dict[str, Any] = {
        "part": args.part,
        "args": {k: str(v) for k, v in vars(args).items()},
        "machine": machine(),
    }
    for database in databases:
        with deployment(database, args.embedder, args.workers) as dep:
            results[database] = run(dep, args, corpus)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\n{database}:\n{table(results[database])}\n", flush=True)
        if problems := results[database].get("log_problems"):
            print(f"{len(problems)} problem line(s) in the logs, first: {problems[:5]}", flush=True)
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
