"""The API steps every part of the scale benchmark takes, over HTTP as a user's script would."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import Deployment
from core import contract
from harness.waiting import wait_until

BATCH = contract.MAX_SAMPLES_PER_REQUEST  # samples a request (the API's maximum)
POOL_BATCH = contract.MAX_POOL_TEXTS_PER_REQUEST  # pool texts a request (the API's maximum)
RATE_BATCHES = 10  # the rate at a size: 10 batches (5,000 samples) posted once the model holds that many
BOTH = ("polite", "long")  # the two traits of the larger models


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
    def settled() -> dict[str, Any] | None:
        model: dict[str, Any] = ok(c.get(f"/models/{handle}"), 200)
        return model if model["state"] != "busy" else None

    return wait_until(settled, timeout, f"{handle} to settle", interval=0.5)


def train(c: httpx.Client, handle: str, effort: str, timeout: float) -> float:
    """Seconds from the request to the model being ready."""
    return float(train_watched(c, handle, effort, timeout)["training_s"])


def train_watched(c: httpx.Client, handle: str, effort: str, timeout: float) -> dict[str, Any]:
    """Train and follow the run's progress every 0.5 s: the whole time, the embedding phase's, the last
    embedding message (texts and workers) and the largest number of workers seen holding a shard."""
    start = time.perf_counter()
    ok(c.post(f"/models/{handle}/train", json={"effort": effort}), 202)
    embedding_until: float | None = None
    holders, message = 0, ""

    def settled() -> dict[str, Any] | None:
        nonlocal embedding_until, holders, message
        model: dict[str, Any] = ok(c.get(f"/models/{handle}"), 200)
        progress = (model.get("last_operation") or {}).get("progress") or {}
        if progress.get("phase") == "embedding":
            message = progress.get("message", "")
            if found := re.search(r"(\d+) worker", message):
                holders = max(holders, int(found.group(1)))
        elif embedding_until is None and progress.get("phase") not in (None, "queued", "starting"):
            embedding_until = time.perf_counter()
        return model if model["state"] != "busy" else None

    model = wait_until(settled, timeout, f"{handle}'s training", interval=0.5)
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
    #: The Retry-After of every 429 met in a run, answered as the client does: wait, send again.
    throttled: ClassVar[list[float]] = []

    def post(self, dep: Deployment, c: httpx.Client, path: str, body: dict[str, Any]) -> Any:
        """POST `body` (201 expected), timed, a 429 waited out and sent again within that time."""
        cpu, start = dep.apis[0].cpu_seconds(), time.perf_counter()
        resp = c.post(path, json=body)
        while resp.status_code == 429:
            wait = float(resp.headers.get("Retry-After", "1"))
            BatchLog.throttled.append(wait)
            time.sleep(wait)
            resp = c.post(path, json=body)
        out = ok(resp, 201)
        self.wall.append(time.perf_counter() - start)
        self.cpu.append(dep.apis[0].cpu_seconds() - cpu)
        return out

    def rate(self, per_batch: int) -> dict[str, float]:
        wall, cpu = self.wall, self.cpu
        return {
            "rate_per_s": round(per_batch * len(wall) / sum(wall), 1),
            "batch_ms": round(1000 * statistics.median(wall), 1),
            "api_cpu_ms_per_batch": round(1000 * statistics.mean(cpu), 1),
        }


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


def row(*cells: Any) -> str:
    """One markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def timed(f: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """(median seconds, the last result) of `repeat` calls."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3), out
