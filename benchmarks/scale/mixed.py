"""Part `mixed`: importers, trainers and scorers at once for `--minutes`; an unexpected answer is an error."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import NAMESPACE, ONE_THREAD, LockProbe, MemorySampler, deployment
from benchmarks.scale.steps import (
    BATCH,
    make_model,
    ok,
    row,
    train,
    wait_settled,
)


def passes(deadline: float) -> Iterator[int]:
    """A client's passes: the first whatever the time (each kind of request is sent at least once, however
    short the run or slow the start), then until the deadline."""
    n = 0
    while n == 0 or time.monotonic() < deadline:
        yield n
        n += 1


def part_mixed(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """`--minutes` of importers (batches of 500 into growing models), trainers (train, reopen, add, train
    again) and scorers at once, on `--workers` worker processes; every answer outside the expected statuses
    counts as an error, and the logs are grepped at the end."""
    import random

    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        key = dep.create_key()
        scored = [f"{NAMESPACE}.scored{i}" for i in range(4)]
        with dep.http(key) as c:
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
            with dep.http(key) as cl:
                make_model(cl, handle, ["polite"])
                i = 0
                for _ in passes(deadline):
                    body = {"samples": corpus.samples(10_000_000 * (n + 1) + i, BATCH)}
                    note("import", cl.post(f"/models/{handle}/samples", json=body), 201)
                    i += BATCH

        def trainer(n: int) -> None:
            handle = f"{NAMESPACE}.train{n}"
            with dep.http(key) as cl:
                make_model(cl, handle, ["polite"])
                i = 0
                for _ in passes(deadline):
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
            with dep.http(key) as cl:
                for i in passes(deadline):
                    body = {"content": corpus.text(90_000_000 + 1_000_000 * n + i, "scored")}
                    note("score", cl.post(f"/models/{rng.choice(scored)}/score", json=body), 200)

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
