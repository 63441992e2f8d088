"""The mixed round: clients score new texts while trainings run in the worker, against an idle pass."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx

from benchmarks.load.drive import FreshTexts, drive
from benchmarks.load.fleet import NAMESPACE, Service
from benchmarks.load.models import check, handle_of, untrained_copies
from core.contract import MODELS_PAGE
from core.demo import DemoModel
from harness.waiting import wait_until

EMBEDDED_WORKERS = 1  # runs `serve` executes at once (its worker child's threads)
MIXED_P99_FACTOR = 3.0  # target: score p99 at most this times the idle p99


class Trainings:
    """Requests every training at once, then polls on a thread until each model is ready or failed."""

    def __init__(self, client: httpx.Client, handles: Sequence[str], effort: str, timeout: float) -> None:
        self.client = client
        self.handles, self.effort, self.timeout = list(handles), effort, timeout
        self.done = threading.Event()
        self.states: dict[str, str] = {}

    def start(self) -> None:
        for handle in self.handles:
            check(self.client.post(f"/v1/models/{handle}/train", json={"effort": self.effort}), 202)
        threading.Thread(target=self._poll, name="trainings", daemon=True).start()

    def _poll(self) -> None:
        def settled() -> bool:
            params: dict[str, str | int] = {"namespace": NAMESPACE, "limit": MODELS_PAGE.maximum}
            page = check(self.client.get("/v1/models", params=params), 200)
            self.states = {m["handle"]: m["state"] for m in page["items"] if m["handle"] in self.handles}
            return all(self.states.get(h) not in (None, "busy") for h in self.handles)  # ready or failed

        # Out of time, the states stay as last seen: the report shows the trainings still busy.
        try:
            with contextlib.suppress(TimeoutError):
                wait_until(settled, self.timeout, "the trainings", interval=0.5)
        finally:
            self.client.close()
            self.done.set()


def run_times(database_url: str, handles: Sequence[str]) -> list[dict[str, float]]:
    """Each finished run's queue wait (created → started) and duration (started → finished), in start order,
    read from the runs table, with `pickup_s`: how long it waited once a worker was free (the time it was
    queued, or the moment the run before it in line finished, whichever is later)."""
    from sqlalchemy import create_engine, select

    from service.store.schema import Model, Run

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
    keys: Sequence[str],
    model: DemoModel,
    texts: Sequence[str],
    args: argparse.Namespace,
    idle: dict[str, Any],
) -> dict[str, Any]:
    """First an idle pass: `--clients` score `--texts` new texts with nothing else running. Then the same
    clients score new texts while `--mixed-trainings` trainings, requested at once, run, until the last is
    over. Every request of both passes carries a text new to the service. Target: p99 <= 3x the idle pass's,
    0 errors, every training succeeded, and no run waited longer than its own duration once a worker was
    free. The idle pass is taken right before, as this machine's speed drifts (see run_one). `key` makes the
    models and starts the trainings; the clients score with `keys` in turn."""
    with service.http(key) as client:
        handles = untrained_copies(client, model, args.mixed_trainings)
    handle = handle_of(model)
    quiet = asyncio.run(
        drive(
            service.base_urls,
            keys,
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
    trainings = Trainings(service.http(key), handles, args.mixed_effort, args.train_timeout)
    started = time.perf_counter()
    trainings.start()
    load = asyncio.run(
        drive(
            service.base_urls,
            keys,
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
    times = run_times(service.database, handles)
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
