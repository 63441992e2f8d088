"""Load benchmark: `python -m benchmarks.load [--database sqlite|postgres|both] [--clients 16]
[--requests N]`.

For each database it starts the service as subprocesses on loopback (`python -m service serve`, SQLite in a
temp data dir or a throwaway PostgreSQL cluster from tests.support.pgcluster), creates an authoring key with
`python -m service keys create`, builds a model from sample_data/<model>/ (model.json + samples.csv), trains
it and polls until it is ready, then drives `POST /v1/models/{h}/score` (JSON `{"content": text}`, one text a
request) from `--clients` concurrent asyncio+aiohttp clients over distinct texts that were never embedded
while training (the other sample_data models' texts, topped up from ../shared/datasets). By default one API
process per core, each with `--scoring-threads` = cores / processes; `--api-processes 1` is the embedded
setup.

`--rounds` cold rounds, each on `--texts` texts new to the service: the in-process engine on those texts, the
service scoring each once, the engine again. Reference: `Scorer.from_snapshot(<the served version's
snapshot>)` behind a cold `CachedEmbedder`, one text a call (like one request); the ratio of a round is the
service's throughput over the mean of the engine's two passes. Then a "warm" phase cycles over the first
round's texts again, for `--requests` requests or `--duration` seconds. Target: the median ratio >= 0.8x,
0 errors.

Prints a markdown table and writes benchmarks/results/load.json (entries for other setups are kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import numpy as np

from core.embedders import CachedEmbedder, MemoryStore, get_embedder
from core.engine import Scorer
from tests.support.pgcluster import PgCluster, free_port

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"
RESULTS = ROOT / "benchmarks" / "results" / "load.json"
DATASETS = Path(os.environ.get("SCORING_DATASETS") or ROOT.parent / "shared" / "datasets")
EXTRA_TEXTS = DATASETS / "stanford_politeness" / "wikipedia.annotated.csv"
TARGET_RATIO = 0.8
MIXED_P99_FACTOR = 3.0  # mixed round: score p99 at most this times the idle p99
NAMESPACE = "bench"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WARMUP_TEXT = "Warm-up request: load the model and open the database connections before timing."


# -- sample data ---------------------------------------------------------------------------------------------


@dataclass
class ModelData:
    name: str
    description: str
    traits: list[dict[str, str]]
    samples: list[dict[str, Any]]


def _read_samples(folder: Path) -> list[dict[str, Any]]:
    with (folder / "samples.csv").open(newline="", encoding="utf-8") as fh:
        return [
            {"trait": r["trait"], "text": r["text"], "quality": float(r["quality"])}
            for r in csv.DictReader(fh)
            if r["text"].strip()
        ]


def load_model_data(folder: Path) -> ModelData:
    samples = _read_samples(folder)
    meta_path = folder / "model.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        traits = [
            {k: t[k] for k in ("name", "positive_label", "negative_label", "description") if k in t}
            for t in meta["traits"]
        ]
        return ModelData(meta.get("name", folder.name), meta.get("description", ""), traits, samples)
    # No model.json yet: one trait per CSV trait, with neutral pole labels.
    names = list(dict.fromkeys(s["trait"] for s in samples))
    traits = [{"name": n, "positive_label": f"{n} high", "negative_label": f"{n} low"} for n in names]
    return ModelData(folder.name, "", traits, samples)


def sample_folders() -> list[Path]:
    return sorted(p for p in SAMPLE_DATA.iterdir() if (p / "samples.csv").exists())


def score_texts(model_folder: Path, limit: int) -> list[str]:
    """Distinct texts never seen while training, in a fixed order: the other sample_data models' texts, topped
    up from ../shared/datasets (Stanford politeness requests) when that is present."""
    others = [p for p in sample_folders() if p != model_folder] or [model_folder]
    texts = dict.fromkeys(s["text"].strip() for p in others for s in _read_samples(p))
    if len(texts) < limit and EXTRA_TEXTS.exists():
        with EXTRA_TEXTS.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if len(texts) >= limit:
                    break
                if row["Request"].strip():
                    texts.setdefault(row["Request"].strip(), None)
    return list(texts)[:limit]


# -- service processes ---------------------------------------------------------------------------------------


def _service_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    return env


def _db_args(database_url: str | None) -> list[str]:
    return ["--database-url", database_url] if database_url else []


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
            cmd = [
                sys.executable,
                "-m",
                "service",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--data-dir",
                str(self.data_dir),
                *_db_args(self.database_url),
                "--embedder",
                self.embedder,
            ]
            cmd += ["--parent-pid", str(os.getpid())]  # stops with us, even after a SIGKILL
            if i > 0:
                cmd.append("--no-worker")  # one worker is enough for the benchmark's single training
            elif self.worker == "in-process":
                cmd.append("--in-process-worker")
            # Every process encodes on its share of the cores, so together they do not oversubscribe them.
            cmd += ["--scoring-threads", str(max(1, (os.cpu_count() or 1) // self.processes))]
            log = (self.data_dir / f"serve-{i}.log").open("wb")
            # Own process group, so stop() also ends anything serve spawned (uvicorn workers, consumers).
            self.procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    env=_service_env(),
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

    def create_key(self) -> str:
        cmd = [
            sys.executable,
            "-m",
            "service",
            "keys",
            "create",
            "--namespace",
            NAMESPACE,
            "--scope",
            "authoring",
            "--data-dir",
            str(self.data_dir),
            *_db_args(self.database_url),
        ]
        proc = subprocess.run(cmd, cwd=ROOT, env=_service_env(), capture_output=True, text=True, timeout=120)
        lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"keys create failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
        return lines[-1]

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
def running_service(database: str, args: argparse.Namespace) -> Iterator[Service]:
    with tempfile.TemporaryDirectory(prefix=f"load-{database}-") as tmp, contextlib.ExitStack() as stack:
        url = None
        if database == "postgres":
            url = stack.enter_context(PgCluster(database="bench")).url
        service = Service(Path(tmp), url, args.embedder, args.api_processes, args.worker)
        stack.callback(service.stop)
        service.start(args.start_timeout)
        yield service


# -- model setup ---------------------------------------------------------------------------------------------


def _check(resp: httpx.Response, *expected: int) -> Any:
    if resp.status_code not in expected:
        request = resp.request
        raise RuntimeError(f"{request.method} {request.url} -> {resp.status_code}: {resp.text[:500]}")
    return resp.json()


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:50] or "model"


def build_and_train(client: httpx.Client, data: ModelData, effort: str, timeout: float) -> tuple[str, dict]:
    """Create, fill and train the model; returns (handle, the active version with its snapshot)."""
    handle = f"{NAMESPACE}.{_slug(data.name)}"
    _check(client.post("/v1/models", json={"handle": handle, "description": data.description}), 201)
    _check(client.post(f"/v1/models/{handle}/traits", json={"traits": data.traits}), 201)
    for start in range(0, len(data.samples), 500):
        chunk = data.samples[start : start + 500]
        _check(client.post(f"/v1/models/{handle}/samples", json={"samples": chunk}), 201)
    _check(client.post(f"/v1/models/{handle}/train", json={"effort": effort}), 202)
    deadline = time.monotonic() + timeout
    while True:
        model = _check(client.get(f"/v1/models/{handle}"), 200)
        if model["state"] == "ready":
            break
        if model["state"] == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"training did not finish: {json.dumps(model.get('last_operation'))}")
        time.sleep(0.5)
    version = _check(client.get(f"/v1/models/{handle}/versions/v{model['version_no']}"), 200)
    if "snapshot" not in version:
        raise RuntimeError("the version read carries no snapshot (is the key an authoring key?)")
    return handle, version


# -- load ----------------------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    requests: int
    errors: int
    error_kinds: dict[str, int]
    seconds: float
    latencies_ms: list[float]
    cpu_s: float | None = None  # CPU time the service processes used during the phase
    client_cpu_s: float = 0.0  # CPU time of this process (the load generator) during the phase

    def summary(self) -> dict[str, Any]:
        lat = np.array(self.latencies_ms) if self.latencies_ms else np.array([np.nan])
        ok = self.requests - self.errors
        return {
            "requests": self.requests,
            "errors": self.errors,
            "error_kinds": self.error_kinds,
            "seconds": round(self.seconds, 3),
            "throughput_rps": round(ok / self.seconds, 2) if self.seconds else 0.0,
            "p50_ms": round(float(np.percentile(lat, 50)), 2),
            "p99_ms": round(float(np.percentile(lat, 99)), 2),
            "max_ms": round(float(lat.max()), 2),
            "service_cpu_ms_per_request": round(1000 * self.cpu_s / ok, 3) if self.cpu_s and ok else None,
            "client_cpu_ms_per_request": round(1000 * self.client_cpu_s / ok, 3) if ok else None,
        }


async def drive(
    base_urls: Sequence[str],
    key: str,
    handle: str,
    texts: Sequence[str],
    clients: int,
    max_requests: int,
    max_seconds: float,
    warmup: bool = True,
    cpu_probe: Callable[[], float | None] = lambda: None,
    until: Callable[[], bool] = lambda: False,
) -> LoadResult:
    """`clients` concurrent loops, each sending one request at a time; texts are taken in a fixed cycle.
    They stop after `max_requests`, `max_seconds`, or once `until()` is true.

    The generator shares the machine's cores with the service, so it uses aiohttp: measured here it costs
    about 0.25 ms of CPU a request against httpx's 1.6 ms, CPU the service would otherwise have had.
    """
    headers = {"Authorization": f"Bearer {key}"}
    path = f"/v1/models/{handle}/score"
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    next_index = 0
    timeout = aiohttp.ClientTimeout(total=60)
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                aiohttp.ClientSession(
                    base_url=u,
                    headers=headers,
                    timeout=timeout,
                    connector=aiohttp.TCPConnector(limit=clients),
                )
            )
            for u in base_urls
        ]

        async def post(session: aiohttp.ClientSession, text: str) -> tuple[int, Any]:
            async with session.post(path, json={"content": text}) as resp:
                return resp.status, await resp.json(content_type=None)

        if warmup:  # not timed: open every connection, on a text outside the measured set
            posts = (post(sessions[i % len(sessions)], WARMUP_TEXT) for i in range(clients))
            warm = await asyncio.gather(*posts)
            for status, body in warm:
                if status != 200:
                    raise RuntimeError(f"warm-up request -> {status}: {str(body)[:500]}")
        cpu_start, client_cpu = cpu_probe(), time.process_time()
        start = time.perf_counter()
        deadline = start + max_seconds

        async def client_loop(session: aiohttp.ClientSession) -> None:
            nonlocal next_index
            while next_index < max_requests and time.perf_counter() < deadline and not until():
                text = texts[next_index % len(texts)]
                next_index += 1
                t0 = time.perf_counter()
                try:
                    status, body = await post(session, text)
                    ok = status == 200 and len(body.get("scores", [])) > 0
                    if not ok:
                        errors[f"http_{status}"] += 1
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    errors[type(exc).__name__] += 1
                    ok = False
                if ok:
                    latencies.append((time.perf_counter() - t0) * 1000)

        await asyncio.gather(*(client_loop(sessions[i % len(sessions)]) for i in range(clients)))
        seconds = time.perf_counter() - start
        cpu_end, client_cpu = cpu_probe(), time.process_time() - client_cpu
    cpu = cpu_end - cpu_start if cpu_start is not None and cpu_end is not None else None
    return LoadResult(next_index, sum(errors.values()), dict(errors), seconds, latencies, cpu, client_cpu)


# -- mixed round: scoring while trainings run ----------------------------------------------------------------

EMBEDDED_WORKERS = 1  # runs `serve` executes at once (its worker child's threads)


class FreshTexts(Sequence[str]):
    """`base` cycled without end, each text made new to the service by a suffix (tag and pass number), so a
    phase of any length scores cold texts only (a plain cycle would be served more and more from the cache)"""

    def __init__(self, base: Sequence[str], tag: str) -> None:
        self.base, self.tag = list(base), tag

    def __len__(self) -> int:
        return 10**9

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        n = len(self.base)
        return f"{self.base[i % n]} ({self.tag} {i // n})"


def mixed_models(client: httpx.Client, data: ModelData, n: int) -> list[str]:
    """`n` untrained copies of the model, each with texts of its own (a suffix), so every training embeds
    texts new to the service, as a new user's models would."""
    handles = []
    for i in range(n):
        handle = f"{NAMESPACE}.mixed_{i}"
        _check(client.post("/v1/models", json={"handle": handle, "description": data.description}), 201)
        _check(client.post(f"/v1/models/{handle}/traits", json={"traits": data.traits}), 201)
        samples = [{**s, "text": f"{s['text']} (copy {i})"} for s in data.samples]
        for start in range(0, len(samples), 500):
            chunk = samples[start : start + 500]
            _check(client.post(f"/v1/models/{handle}/samples", json={"samples": chunk}), 201)
        handles.append(handle)
    return handles


class Trainings:
    """Requests every training at once, then polls on a thread until each model is ready or failed."""

    def __init__(self, base_url: str, key: str, handles: Sequence[str], effort: str, timeout: float) -> None:
        self.client = httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120, trust_env=False
        )
        self.handles, self.effort, self.timeout = list(handles), effort, timeout
        self.done = threading.Event()
        self.states: dict[str, str] = {}

    def start(self) -> None:
        for handle in self.handles:
            _check(self.client.post(f"/v1/models/{handle}/train", json={"effort": self.effort}), 202)
        threading.Thread(target=self._poll, name="trainings", daemon=True).start()

    def _poll(self) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            while time.monotonic() < deadline:
                params = {"namespace": NAMESPACE, "limit": 250}
                page = _check(self.client.get("/v1/models", params=params), 200)
                self.states = {m["handle"]: m["state"] for m in page["items"] if m["handle"] in self.handles}
                if all(self.states.get(h) in ("ready", "failed") for h in self.handles):
                    return
                time.sleep(0.5)
        finally:
            self.client.close()
            self.done.set()


def run_times(database_url: str, handles: Sequence[str]) -> list[dict[str, float]]:
    """Each finished run's queue wait (created → started) and duration (started → finished), in start order,
    read from the runs table, with `pickup_s`: how long it waited once a worker was free (the time it was
    queued, or the moment the run before it in line finished, whichever is later)."""
    from sqlalchemy import create_engine, select

    from service.store.tables import Model, Run

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(Run.created_at, Run.started_at, Run.finished_at)
                .join(Model, Model.id == Run.model_id)
                .where(Model.handle.in_(handles), Run.finished_at.is_not(None))
                .order_by(Run.started_at)
            ).all()
    finally:
        engine.dispose()
    finishes = sorted(r.finished_at for r in rows)
    times = []
    for k, r in enumerate(rows):
        free = r.created_at if k < EMBEDDED_WORKERS else max(r.created_at, finishes[k - EMBEDDED_WORKERS])
        times.append(
            {
                "wait_s": round((r.started_at - r.created_at).total_seconds(), 3),
                "duration_s": round((r.finished_at - r.started_at).total_seconds(), 3),
                "pickup_s": round(max(0.0, (r.started_at - free).total_seconds()), 3),
            }
        )
    return times


def mixed_round(
    service: Service,
    key: str,
    data: ModelData,
    texts: Sequence[str],
    args: argparse.Namespace,
    idle: dict[str, float],
) -> dict[str, Any]:
    """First an idle pass: `--clients` score `--texts` new texts with nothing else running. Then the same
    clients score new texts while `--mixed-trainings` trainings, requested at once, run, until the last is
    over. Every request of both passes carries a text new to the service. Target: p99 <= 3x the idle pass's,
    0 errors, every training succeeded, and no run waited longer than its own duration once a worker was
    free. The idle pass is taken right before, as this machine's speed drifts (see run_one)."""
    with httpx.Client(
        base_url=service.base_urls[0],
        headers={"Authorization": f"Bearer {key}"},
        timeout=120,
        trust_env=False,
    ) as client:
        handles = mixed_models(client, data, args.mixed_trainings)
    handle = f"{NAMESPACE}.{_slug(data.name)}"
    quiet = asyncio.run(
        drive(
            service.base_urls,
            key,
            handle,
            FreshTexts(texts, "idle"),
            args.clients,
            args.texts,
            args.duration,
            warmup=False,
            cpu_probe=service.cpu_seconds,
        )
    )
    idle = {**idle, "adjacent_pass": quiet.summary()}
    trainings = Trainings(service.base_urls[0], key, handles, args.mixed_effort, args.train_timeout)
    started = time.perf_counter()
    trainings.start()
    load = asyncio.run(
        drive(
            service.base_urls,
            key,
            handle,
            FreshTexts(texts, "mixed"),
            args.clients,
            10**9,
            args.train_timeout,
            warmup=False,
            cpu_probe=service.cpu_seconds,
            until=trainings.done.is_set,
        )
    )
    trainings.done.wait(args.train_timeout)
    wall = time.perf_counter() - started
    times = run_times(service.database_url or f"sqlite:///{service.data_dir / 'scoring.sqlite'}", handles)
    summary = load.summary()
    failed = sum(1 for h in handles if trainings.states.get(h) != "ready")
    reference = idle["adjacent_pass"]
    p99_ratio = summary["p99_ms"] / reference["p99_ms"] if reference["p99_ms"] else float("inf")
    queue_ok = len(times) == len(handles) and all(t["pickup_s"] <= t["duration_s"] for t in times)
    return {
        "trainings": len(handles),
        "worker": args.worker,
        "effort": args.mixed_effort,
        "failed_trainings": failed,
        "seconds": round(wall, 2),
        "service": summary,
        "idle": idle,  # the cold rounds' medians, and the idle pass right before the trainings
        "p50_vs_idle": round(summary["p50_ms"] / reference["p50_ms"], 2) if reference["p50_ms"] else None,
        "p99_vs_idle": round(p99_ratio, 2),
        "runs": times,
        "queue_wait_mean_s": round(statistics.mean(t["wait_s"] for t in times), 2) if times else None,
        "run_duration_mean_s": round(statistics.mean(t["duration_s"] for t in times), 2) if times else None,
        "pickup_mean_s": round(statistics.mean(t["pickup_s"] for t in times), 3) if times else None,
        "target_met": p99_ratio <= MIXED_P99_FACTOR and summary["errors"] == 0 and failed == 0 and queue_ok,
    }


# -- in-process reference ------------------------------------------------------------------------------------


class Engine:
    """The in-process engine on the served version's snapshot, as a notebook would use it: the default
    embedder (all cores) behind a fresh (cold) `CachedEmbedder` for every pass."""

    def __init__(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        self.embedder_id = Scorer.from_snapshot(snapshot).embedder_id
        self.base = get_embedder(self.embedder_id)
        self.base.encode([WARMUP_TEXT])  # load the model before timing, as the service has by now

    def scorer(self) -> Scorer:
        return Scorer.from_snapshot(self.snapshot, embedder=CachedEmbedder(self.base, MemoryStore()))

    @staticmethod
    def one_at_a_time(scorer: Scorer, texts: Sequence[str]) -> tuple[float, float]:
        """(texts/s, CPU ms a text), one text a call: like one request."""
        start, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            scorer.score([text])
        seconds = time.perf_counter() - start
        return len(texts) / seconds, 1000 * (time.process_time() - cpu) / len(texts)

    def cold(self, texts: Sequence[str]) -> tuple[float, float]:
        return self.one_at_a_time(self.scorer(), texts)

    def extras(self, texts: Sequence[str]) -> dict[str, float]:
        """For information: batches of 32 (cold), and one text a call with the cache warm."""
        scorer = self.scorer()
        start = time.perf_counter()
        for i in range(0, len(texts), 32):
            scorer.score(list(texts[i : i + 32]))
        batched = len(texts) / (time.perf_counter() - start)
        warm, _ = self.one_at_a_time(scorer, texts)
        return {"batch32_tps": round(batched, 2), "single_warm_tps": round(warm, 2)}


# -- orchestration -------------------------------------------------------------------------------------------


def run_one(
    database: str,
    args: argparse.Namespace,
    folder: Path,
    text_sets: list[list[str]],
    mixed_texts: list[str] | None = None,
) -> dict[str, Any]:
    """Rounds of (engine, service cold, engine) on fresh texts, so both sides are measured at the same
    moment: this machine's speed drifts by 20% or more over minutes, which a single reference taken before
    or after the load would turn into a biased ratio. The figure is the median over the rounds."""
    data = load_model_data(folder)
    print(f"[{database}] starting {args.api_processes} API process(es) ...", flush=True)
    t0 = time.perf_counter()
    with running_service(database, args) as service:
        key = service.create_key()
        with httpx.Client(
            base_url=service.base_urls[0],
            headers={"Authorization": f"Bearer {key}"},
            timeout=120,
            trust_env=False,
        ) as client:
            print(f"[{database}] training {data.name!r} ({len(data.samples)} samples) ...", flush=True)
            handle, version = build_and_train(client, data, args.effort, args.train_timeout)
        setup_s = time.perf_counter() - t0
        engine = Engine(version["snapshot"])
        urls, n = service.base_urls, args.clients
        rounds = []
        for r, texts in enumerate(text_sets, 1):
            print(
                f"[{database}] round {r}/{len(text_sets)}: engine, {n} clients on {len(texts)} new texts, "
                "engine ...",
                flush=True,
            )
            before, before_cpu = engine.cold(texts)
            cold = asyncio.run(
                drive(
                    urls,
                    key,
                    handle,
                    texts,
                    n,
                    len(texts),
                    args.duration,
                    warmup=r == 1,
                    cpu_probe=service.cpu_seconds,
                )
            )
            after, after_cpu = engine.cold(texts)
            summary = cold.summary()
            engine_tps = (before + after) / 2
            engine_cpu = (before_cpu + after_cpu) / 2
            per_request = summary["service_cpu_ms_per_request"]
            rounds.append(
                {
                    "service": summary,
                    "engine_single_tps": [round(before, 2), round(after, 2)],
                    "engine_single_cpu_ms_per_text": round(engine_cpu, 3),
                    "ratio": round(summary["throughput_rps"] / engine_tps, 3),
                    # CPU time a text, engine / service: a check on the wall-clock ratio.
                    "cpu_ratio": round(engine_cpu / per_request, 3) if per_request else None,
                }
            )
        print(f"[{database}] warm: {args.requests} requests / {args.duration:.0f}s", flush=True)
        warm = asyncio.run(
            drive(
                urls,
                key,
                handle,
                text_sets[0],
                n,
                args.requests,
                args.duration,
                warmup=False,
                cpu_probe=service.cpu_seconds,
            )
        )
        mixed = None
        if args.mixed_trainings and mixed_texts:
            print(
                f"[{database}] mixed: {n} clients scoring while {args.mixed_trainings} trainings run ...",
                flush=True,
            )
            idle = {k: _median(rounds, k) for k in ("p50_ms", "p99_ms")}
            mixed = mixed_round(service, key, data, mixed_texts, args, idle)
    extras = engine.extras(text_sets[0])
    errors = sum(x["service"]["errors"] for x in rounds) + warm.errors
    ratio = statistics.median(x["ratio"] for x in rounds)
    cpu_ratios = [x["cpu_ratio"] for x in rounds if x["cpu_ratio"] is not None]
    warm_s = warm.summary()
    return {
        "database": database,
        "model": handle,
        "version_no": version.get("version_no"),
        "api_processes": args.api_processes,
        "clients": args.clients,
        "embedder": engine.embedder_id,
        "texts_per_round": len(text_sets[0]),
        "setup_s": round(setup_s, 1),
        "rounds": rounds,  # every text new to the service and to the engine
        "service_warm": warm_s,  # the first round's texts again
        "engine_extras": extras,
        "ratio_cold_vs_engine_single": ratio,
        "cpu_ratio_cold_vs_engine_single": statistics.median(cpu_ratios) if cpu_ratios else None,
        "ratio_warm_vs_engine_single_warm": round(warm_s["throughput_rps"] / extras["single_warm_tps"], 3),
        "errors": errors,
        "target_met": ratio >= TARGET_RATIO and errors == 0,
        "mixed": mixed,  # scoring while trainings run (None without --mixed-trainings)
    }


def _median(rounds: Sequence[dict[str, Any]], key: str) -> float:
    return statistics.median(x["service"][key] for x in rounds)


def markdown(runs: Sequence[dict[str, Any]]) -> str:
    head = (
        "| database | cache | API procs | clients | requests | errors | req/s | p50 ms | p99 ms "
        "| engine 1 text/call (texts/s) | ratio | CPU ratio | target |"
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in runs:
        rounds = r["rounds"]
        engine = statistics.median(statistics.mean(x["engine_single_tps"]) for x in rounds)
        span = ", ".join(f"{x['ratio']:.2f}" for x in rounds)
        rows.append(
            f"| {r['database']} | cold, median of {len(rounds)} | {r['api_processes']} | {r['clients']} "
            f"| {sum(x['service']['requests'] for x in rounds)} "
            f"| {sum(x['service']['errors'] for x in rounds)} | {_median(rounds, 'throughput_rps'):.1f} "
            f"| {_median(rounds, 'p50_ms'):.1f} | {_median(rounds, 'p99_ms'):.1f} | {engine:.1f} "
            f"| {r['ratio_cold_vs_engine_single']:.2f}x ({span}) "
            f"| {r['cpu_ratio_cold_vs_engine_single']:.2f}x "
            f"| {'met' if r['target_met'] else 'MISSED'} |"
        )
        w = r["service_warm"]
        rows.append(
            f"| {r['database']} | warm | {r['api_processes']} | {r['clients']} | {w['requests']} "
            f"| {w['errors']} | {w['throughput_rps']:.1f} | {w['p50_ms']:.1f} | {w['p99_ms']:.1f} "
            f"| {r['engine_extras']['single_warm_tps']:.1f} | {r['ratio_warm_vs_engine_single_warm']:.2f}x "
            "| | |"
        )
    mixed = [r for r in runs if r.get("mixed")]
    if mixed:
        rows += [
            "",
            "| database | API procs | worker | trainings | requests | errors | idle p50 / p99 ms "
            "| p50 ms (× idle) | p99 ms (× idle) | queue wait mean s | run mean s | pickup mean s "
            "| target |",
            "|" + "---|" * 13,
        ]
    for r in mixed:
        m, s = r["mixed"], r["mixed"]["service"]
        rows.append(
            f"| {r['database']} | {r['api_processes']} | {m['worker']} | {m['trainings']} | {s['requests']} "
            f"| {s['errors']} "
            f"| {m['idle']['adjacent_pass']['p50_ms']:.0f} / {m['idle']['adjacent_pass']['p99_ms']:.0f} "
            f"| {s['p50_ms']:.0f} ({m['p50_vs_idle']}×) | {s['p99_ms']:.0f} ({m['p99_vs_idle']}×) "
            f"| {m['queue_wait_mean_s']} | {m['run_duration_mean_s']} | {m['pickup_mean_s']} "
            f"| {'met' if m['target_met'] else 'MISSED'} |"
        )
    return "\n".join(rows)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.split("\n\n")[0])
    p.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--requests", type=int, default=2000, help="warm phase: stop after this many requests")
    p.add_argument("--duration", type=float, default=120.0, help="... or this many seconds (per phase)")
    p.add_argument("--texts", type=int, default=1000, help="new texts a round (each cold round)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of engine, service cold, engine")
    p.add_argument(
        "--api-processes",
        type=int,
        default=os.cpu_count() or 1,
        help="API processes, clients spread over them (default: one per core)",
    )
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--model", default=None, help="sample_data folder name (default: the first)")
    p.add_argument("--effort", default="low", help="training effort (does not affect scoring cost)")
    p.add_argument("--start-timeout", type=float, default=180.0)
    p.add_argument("--train-timeout", type=float, default=900.0)
    p.add_argument(
        "--mixed-trainings",
        type=int,
        default=10,
        help="mixed round: trainings run while the clients score (0: no mixed round)",
    )
    p.add_argument("--mixed-effort", default="medium", help="the mixed round's training effort")
    p.add_argument(
        "--worker",
        choices=("child", "in-process"),
        default="child",
        help="where the first API process runs background runs: its worker child process (serve's "
        "default) or a thread of its own (serve --in-process-worker, the former shape)",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    return p.parse_args(argv)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C: the `with` blocks stop the service processes and the PostgreSQL cluster
    (Python's default SIGTERM action exits at once, leaving them running)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    folders = sample_folders()
    if not folders:
        raise SystemExit(f"no sample_data/*/samples.csv under {SAMPLE_DATA}")
    folder = SAMPLE_DATA / args.model if args.model else folders[0]
    sets = args.rounds + (1 if args.mixed_trainings else 0)  # the mixed round scores new texts too
    texts = score_texts(folder, args.texts * sets)
    if len(texts) < args.texts * sets:
        raise SystemExit(f"only {len(texts)} distinct texts for {sets} rounds of {args.texts}")
    text_sets = [texts[i : i + args.texts] for i in range(0, len(texts), args.texts)]
    mixed_texts = text_sets.pop() if args.mixed_trainings else None
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    runs = [run_one(db, args, folder, text_sets, mixed_texts) for db in databases]

    report: dict[str, Any] = {}
    if args.out.exists():
        with contextlib.suppress(ValueError):
            report = json.loads(args.out.read_text())
    report.setdefault("runs", {})
    shape = "-in-process-worker" if args.worker == "in-process" else ""
    report["runs"].update({f"{r['database']}-{r['api_processes']}p{shape}": r for r in runs})
    report["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    report["target_ratio"] = TARGET_RATIO
    report["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(markdown(runs))
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0 if all(r["target_met"] and (r["mixed"] or {}).get("target_met", True) for r in runs) else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    sys.exit(main())
