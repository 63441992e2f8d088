"""Embedders side by side: `python -m benchmarks.embedders [--texts 600] [--embedders NAME ...]`.

For each embedder, in one process and interleaved rounds (so drifting load hits all alike): CPU per text
and texts/s encoding the first N Stanford politeness requests (Wikipedia; read from ../shared/datasets,
never copied) in the embedder's own batches, with onnxruntime at 1 and at 2 intra-op threads; and the
cosine of each text's vector to the first embedder's (min / mean). Then the resident memory a fresh process
adds by loading each and encoding a few texts (with `--together`, also all of them in one process, as a
service process that scores on several embedders holds them), and the cold embedding of `--cold` texts (both
politeness files, repeated if needed) at 2 threads, the cost of a first evaluation.
Default embedders: minilm, minilm-qint8v2. Prints a markdown table and writes
benchmarks/results/embedders.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.embedders.registry import ALIASES, _build
from harness.datasets import datasets_dir

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "embedders.json"


def politeness(limit: int) -> list[str]:
    texts: list[str] = []
    for name in ("wikipedia.annotated.csv", "stack-exchange.annotated.csv"):
        with (datasets_dir() / "stanford_politeness" / name).open(newline="", encoding="utf-8") as fh:
            texts += [r["Request"].strip() for r in csv.DictReader(fh) if r["Request"].strip()]
    while len(texts) < limit:
        texts += texts
    return texts[:limit]


def make(name: str, threads: int) -> Any:
    emb: Any = _build(ALIASES.get(name, name))  # a fresh instance per thread count, not the process-wide one
    emb.threads = threads
    return emb


def memory_mb(*names: str) -> float:
    """Resident memory a fresh process adds by loading `names` (one, or several side by side) and encoding a
    few texts with each (their graphs built)."""
    code = (
        "import psutil, sys; from benchmarks.embedders import make, politeness; "
        "before = psutil.Process().memory_info().rss; "
        "embs = [make(name, 1) for name in sys.argv[1:]]; [emb.encode(politeness(16)) for emb in embs]; "
        "print((psutil.Process().memory_info().rss - before) / 2**20)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return round(float(out.stdout.strip().splitlines()[-1]), 1)


def timed(emb: Any, texts: Sequence[str]) -> tuple[float, float, np.ndarray]:
    wall, cpu = time.perf_counter(), time.process_time()
    vecs = emb.encode(texts)
    return time.perf_counter() - wall, time.process_time() - cpu, vecs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", nargs="+", default=["minilm", "minilm-qint8v2"])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", type=int, default=10_000, help="texts for the cold run (0 skips it)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--together", action="store_true", help="also the memory of all of them in one process"
    )
    args = parser.parse_args(argv)

    texts = politeness(args.texts)
    rows: dict[str, dict[str, Any]] = {name: {"embedder": name} for name in args.embedders}
    embs = {(name, t): make(name, t) for name in args.embedders for t in (1, 2)}
    for emb in embs.values():
        emb.encode(texts[:16])  # load (and for the int8 graph, build once) before any timing
    samples: dict[tuple[str, int], list[tuple[float, float]]] = {key: [] for key in embs}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for key, emb in embs.items():
            wall, cpu, vecs = timed(emb, texts)
            samples[key].append((wall, cpu))
            vectors[key[0]] = vecs
    ref = vectors[args.embedders[0]]
    for (name, threads), runs in samples.items():
        wall = float(np.median([w for w, _ in runs]))
        cpu = float(np.median([c for _, c in runs]))
        rows[name][f"texts_per_s_{threads}t"] = round(len(texts) / wall, 1)
        rows[name][f"cpu_ms_per_text_{threads}t"] = round(1000 * cpu / len(texts), 2)
    for name in args.embedders:
        rows[name]["id"] = embs[(name, 1)].id
        rows[name]["cosine_min"] = rows[name]["cosine_mean"] = None  # another space: no cosine to compare
        if vectors[name].shape == ref.shape:
            cos = (vectors[name] * ref).sum(axis=1)
            rows[name]["cosine_min"], rows[name]["cosine_mean"] = (
                round(float(cos.min()), 4),
                round(float(cos.mean()), 5),
            )
    for name in args.embedders:
        rows[name]["memory_mb"] = memory_mb(name)
    together = memory_mb(*args.embedders) if args.together else None
    if args.cold:
        cold = politeness(args.cold)
        for name in args.embedders:
            emb = make(name, 2)
            wall, cpu, _ = timed(emb, cold)  # includes load: a first evaluation pays it too
            rows[name]["cold_seconds"] = round(wall, 1)
            rows[name]["cold_cpu_seconds"] = round(cpu, 1)

    load = os.getloadavg()
    lines = [
        f"{len(texts)} politeness requests, median of {args.rounds} interleaved rounds; "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}, {os.cpu_count()} cores",
        "",
        f"| embedder | CPU/text 1 thread | texts/s 1 thread | CPU/text 2 threads | texts/s 2 threads "
        f"| cosine to {args.embedders[0]} (min / mean) | memory added | {args.cold:,} texts cold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows.values():
        cold_cell = f"{r['cold_seconds']} s ({r['cold_cpu_seconds']} s CPU)" if "cold_seconds" in r else "–"
        cosine = "–" if r["cosine_min"] is None else f"{r['cosine_min']} / {r['cosine_mean']}"
        lines.append(
            f"| {r['embedder']} (`{r['id']}`) | {r['cpu_ms_per_text_1t']} ms | {r['texts_per_s_1t']} "
            f"| {r['cpu_ms_per_text_2t']} ms | {r['texts_per_s_2t']} "
            f"| {cosine} | {r['memory_mb']} MB | {cold_cell} |"
        )
    if together is not None:
        lines += ["", f"memory added by {' + '.join(args.embedders)} in one process: {together} MB"]
    print("\n".join(lines))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    result = {"texts": len(texts), "load": load, "rows": list(rows.values())}
    if together is not None:
        result["together_memory_mb"] = together
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
