"""The scale benchmark's command line: `python -m benchmarks.scale PART [--database …] …`."""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.scale import imports, million, mixed, models, speedup
from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import RESULTS_DIR, build_embedder
from benchmarks.scale.steps import BATCH, POOL_BATCH, RATE_BATCHES
from core.contract import DEFAULT_EMBEDDER

DESCRIPTION = "Scale benchmark: the service as real processes, at sizes a deployment meets."


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


def rate_texts(text: str) -> int:
    """Whole pool requests (1,000 texts each), so each kind posts exactly this many."""
    n = int(text.replace("_", ""))
    if n <= 0 or n % POOL_BATCH:
        raise argparse.ArgumentTypeError(f"a positive multiple of {POOL_BATCH:,}")
    return n


Part = Callable[[str, argparse.Namespace, Corpus], dict[str, Any]]
PARTS: dict[str, tuple[Part, Callable[[dict[str, Any]], str]]] = {
    "imports": (imports.part_imports, imports.table_imports),
    "speedup": (speedup.part_speedup, speedup.table_speedup),
    "million": (million.part_million, million.table_million),
    "models": (models.part_models, models.table_models),
    "mixed": (mixed.part_mixed, mixed.table_mixed),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=DESCRIPTION)
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
    g.add_argument(
        "--rate-texts",
        type=rate_texts,
        default=RATE_BATCHES * BATCH,
        help="texts posted once at each size to measure its rate (a multiple of 1,000)",
    )
    g.add_argument(
        "--limits",
        choices=("off", "default"),
        default="off",
        help="the per-caller rate limits: off (capacity) or at their defaults (what a client meets)",
    )
    g = p.add_argument_group("speedup and million")
    g.add_argument("--samples", type=int, default=25_000, help="samples in the model")
    g.add_argument("--worker-counts", type=sizes, default=sizes("1,2"), help="speedup: worker processes")
    g.add_argument(
        "--shard-texts",
        type=int,
        help="speedup: texts per shard of a training's embedding (default: the service's, 5,000)",
    )
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
