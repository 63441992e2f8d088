"""Part `speedup`: one training on a fresh deployment with each worker count (embedding is the cost)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import NAMESPACE, ONE_THREAD, MemorySampler, deployment
from benchmarks.scale.steps import (
    BatchLog,
    fill,
    make_model,
    row,
    train_watched,
)


def part_speedup(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """A training of `--samples` samples with `--embedder` (the default embedder: embedding is the cost) on a
    fresh deployment (nothing cached) with each worker count of `--worker-counts`."""
    rows = []
    shards = {"SCORING_SHARD_TEXTS": str(args.shard_texts)} if args.shard_texts is not None else {}
    for workers in args.worker_counts:
        with deployment(database, args.embedder, workers, **ONE_THREAD, **shards) as dep:
            handle = f"{NAMESPACE}.speedup"
            with dep.http(dep.create_key()) as c:
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
