"""Part `models`: thousands of small trained models, scoring spread over them, listing them."""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import NAMESPACE, ONE_THREAD, Deployment, MemorySampler, deployment
from benchmarks.scale.steps import (
    BOTH,
    list_all,
    make_model,
    ok,
    row,
    timed,
    wait_settled,
)


def part_models(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """`--models` trained models of 40 samples each (two traits), then scoring spread over all of them from 8
    concurrent clients, memory, and listing the models."""
    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        key = dep.create_key()
        out: dict[str, Any] = {"models": args.models}
        with dep.http(key) as c, MemorySampler(dep) as memory:
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
        with dep.http(key) as c:
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
