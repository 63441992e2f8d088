"""Part `imports`: one model, samples posted in batches of 500 (`--sizes 1000,10000,100000`, add 1000000 for
the million), the hashing embedder (embedding is not the cost). At each size: the time to add them, the rate
of 10 batches posted once the model holds that many (5,000 samples more; `--rate-texts`) and the API
process's CPU per batch, a training, listing all samples 500 a page; then the model is reopened and filled
on. A throwaway model takes as many first, so the first size's rate is not the API process's first
requests'. Pool texts (1,000 a request) and evaluation items (500) the same way, up to `--pool-sizes`. A
probe meanwhile takes the write lock (SQLite: BEGIN IMMEDIATE) or the model row's lock (PostgreSQL: SELECT …
FOR UPDATE) every 0.25 s and records how long it waited: how long any other writer waits behind the import.
Target: the rate at each size >= 0.7x the rate at 1,000, and no error in the logs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import LIMITS_ON, NAMESPACE, Deployment, LockProbe, MemorySampler, deployment
from benchmarks.scale.steps import (
    BATCH,
    POOL_BATCH,
    BatchLog,
    fill,
    list_all,
    make_model,
    ok,
    train,
)


def part_imports(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    limits = LIMITS_ON if args.limits == "default" else {}
    with deployment(database, args.embedder, args.workers, **limits) as dep:
        return imports(dep, args, corpus)


def imports(dep: Deployment, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    handle = f"{NAMESPACE}.imports"
    with dep.http(dep.create_key()) as c:
        make_model(c, handle, ["polite"])
        rows: list[dict[str, Any]] = []
        log = BatchLog()
        warm_up = f"{NAMESPACE}.warm-up"
        make_model(c, warm_up, ["polite"])
        fill(dep, c, warm_up, corpus, 0, args.rate_texts, BatchLog())
        with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, handle) as probe:
            stored = 0
            for size in args.sizes:
                memory.phase = f"import {size}"
                probe_start = len(probe.waits_ms)
                fill(dep, c, handle, corpus, stored, size, log)
                held, at_size = max(stored, size), BatchLog()  # the rate at this size
                stored = held + args.rate_texts
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
            pool = part_pool_and_eval(dep, c, handle, args.pool_sizes, args.rate_texts, corpus, memory)
            lock = probe.summary()
    base = rows[0]["rate_per_s"]
    for row in rows:
        row["rate_vs_first"] = round(row["rate_per_s"] / base, 2)
    return {
        "limits": args.limits,
        "throttled": {"count": len(BatchLog.throttled), "waited_s": sum(BatchLog.throttled)},
        "samples": rows,
        **pool,
        "lock_probe": lock,
        "slow_writes": dep.slow_writes(),
        "log_problems": dep.log_problems(),
    }


def part_pool_and_eval(
    dep: Deployment,
    c: httpx.Client,
    handle: str,
    sizes: list[int],
    rate: int,
    corpus: Corpus,
    memory: MemorySampler,
) -> dict[str, Any]:
    """Pool texts (1,000 a request) and evaluation items (500) up to each size, then the rate at that size:
    `rate` texts more (5,000 by default: 5 pool batches, 10 evaluation batches)."""
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
        stored_pool = add_pool(stored_pool, stored_pool + rate, at_size)
        pool_rows.append({"texts": stored_pool - rate, **at_size.rate(POOL_BATCH)})
        stored_eval = add_items(stored_eval, max(size, stored_eval), BatchLog())
        at_size = BatchLog()
        stored_eval = add_items(stored_eval, stored_eval + rate, at_size)
        eval_rows.append({"items": stored_eval - rate, **at_size.rate(BATCH)})
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
