"""Speed benchmark: `python -m benchmarks.speed [--quick]`.

(a) Raw MiniLM encode throughput vs local scoring throughput (`Scorer.score` through a
    cold `CachedEmbedder`) on the same 2,000 real texts (Stanford politeness, Wikipedia
    requests, read from ../shared/datasets, never copied). Target ratio >= 0.9.
(b) Re-scoring the same texts with the cache warm: speed-up over the cold run. Target >= 50x.
(c) Training time at effort `low` for 1k, 10k and 100k samples spread over 5 traits, with
    cached embeddings. Embedding 100k texts with MiniLM would take ~10 minutes on 2 cores and
    is not what (c) measures, so the texts are synthetic ids and `TableEmbedder` returns a
    precomputed 384-d unit vector per text (random noise plus a per-trait signal along a
    random direction, so every trait is learnable). It sits behind a `CachedEmbedder` that
    is warmed before timing, so the timed part is cache lookup (sha256 per text) + training.

Prints a markdown table and writes benchmarks/results/speed.json.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from core.embedders import CachedEmbedder, MemoryStore, MiniLMEmbedder
from core.engine import Scorer, train
from core.engine.types import Sample, TraitSpec
from harness.datasets import datasets_dir

ROOT = Path(__file__).resolve().parents[1]
POLITENESS = "stanford_politeness/wikipedia.annotated.csv"  # under the datasets folder (harness.datasets)
RESULTS = ROOT / "benchmarks" / "results" / "speed.json"
N_TEXTS = 2_000
N_TRAIN_TEXTS = 400  # politeness snapshot for (a)/(b), from rows not in the 2,000 scored
TRAIN_SIZES = (1_000, 10_000, 100_000)
N_TRAITS = 5
DIM = 384


def load_politeness() -> tuple[list[str], list[float]]:
    """(texts, quality) with quality = rank of the normalised politeness score in [0, 1]."""
    with (datasets_dir() / POLITENESS).open(newline="", encoding="utf-8") as fh:
        rows = [(r["Request"].strip(), float(r["Normalized Score"])) for r in csv.DictReader(fh)]
    rows = [r for r in rows if r[0]]
    scores = np.array([s for _, s in rows])
    ranks = scores.argsort().argsort() / (len(scores) - 1)
    return [t for t, _ in rows], [float(q) for q in ranks]


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process over all threads, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def politeness_snapshot(minilm: MiniLMEmbedder, texts: Sequence[str], quality: Sequence[float]) -> dict:
    trait = TraitSpec("polite", "Politeness", "polite", "impolite")
    samples = [Sample("polite", t, q, id=i) for i, (t, q) in enumerate(zip(texts, quality, strict=True))]
    # Extreme quartiles only, as a user would label obvious examples.
    samples = [s for s in samples if s.quality <= 0.25 or s.quality >= 0.75]
    return train([trait], samples, embedder=CachedEmbedder(minilm), effort="low").snapshot


def bench_scoring(texts: list[str], snapshot: dict, minilm: MiniLMEmbedder, repeats: int) -> dict:
    minilm.encode(texts[:64])  # load the session and warm up onnxruntime before any timing
    raw_times, cold_times, warm_times, raw_cpu, cold_cpu = [], [], [], [], []
    for _ in range(repeats):  # interleaved so drifting machine load hits both sides alike
        wall, cpu, _ = timed(lambda: minilm.encode(texts))
        raw_times.append(wall)
        raw_cpu.append(cpu)
        cached = CachedEmbedder(minilm, MemoryStore())
        scorer = Scorer.from_snapshot(snapshot, embedder=cached)
        wall, cpu, scores = timed(partial(scorer.score, texts))
        cold_times.append(wall)
        cold_cpu.append(cpu)
        assert scores.shape == (len(texts), 1) and cached.misses == len(set(texts))
        warm_times.append(min(timed(partial(scorer.score, texts))[0] for _ in range(5)))
        assert cached.hits >= 5 * len(texts)
    raw, cold, warm = min(raw_times), min(cold_times), min(warm_times)
    return {
        "raw_encode_cpu_s": min(raw_cpu),
        "score_cold_cpu_s": min(cold_cpu),
        "texts": len(texts),
        "repeats": repeats,
        "raw_encode_s": raw,
        "raw_encode_texts_per_s": len(texts) / raw,
        "score_cold_s": cold,
        "score_cold_texts_per_s": len(texts) / cold,
        "score_vs_raw_ratio": raw / cold,
        # CPU time is steadier than wall time when the machine is shared.
        "score_vs_raw_cpu_ratio": min(raw_cpu) / min(cold_cpu),
        "score_warm_s": warm,
        "score_warm_texts_per_s": len(texts) / warm,
        "warm_speedup": cold / warm,
        "all_runs": {
            "raw_s": raw_times,
            "cold_s": cold_times,
            "warm_s": warm_times,
            "raw_cpu_s": raw_cpu,
            "cold_cpu_s": cold_cpu,
        },
    }


class TableEmbedder:
    """Returns precomputed vectors for known texts (stands in for a fully warmed cache)."""

    def __init__(self, table: dict[str, np.ndarray], dim: int, embedder_id: str) -> None:
        self.table, self.dim, self.id = table, dim, embedder_id

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        for t in texts:  # pole texts the engine writes from the labels: a fixed vector each, cached too
            if t not in self.table:
                seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
                v = np.random.default_rng(seed).standard_normal(self.dim)
                self.table[t] = (v / np.linalg.norm(v)).astype(np.float32)
        return np.vstack([self.table[t] for t in texts]).astype(np.float32, copy=False)


def synthetic_samples(
    n: int, rng: np.random.Generator
) -> tuple[list[TraitSpec], list[Sample], TableEmbedder]:
    traits = [TraitSpec(f"t{k}", f"Trait {k}", f"high {k}", f"low {k}") for k in range(N_TRAITS)]
    directions = rng.standard_normal((N_TRAITS, DIM))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    trait_idx = np.arange(n) % N_TRAITS
    # Quality mostly near the poles with some in-between labels, like hand-labelled data.
    quality = np.clip(rng.beta(0.4, 0.4, n), 0.0, 1.0)
    noise = rng.standard_normal((n, DIM)) / np.sqrt(DIM)
    vecs = noise + 0.35 * (2 * quality - 1)[:, None] * directions[trait_idx]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    texts = [f"synthetic sample {i} of trait t{trait_idx[i]}" for i in range(n)]
    samples = [Sample(f"t{trait_idx[i]}", texts[i], float(quality[i]), id=i) for i in range(n)]
    table = dict(zip(texts, vecs.astype(np.float32), strict=True))
    return traits, samples, TableEmbedder(table, DIM, f"synthetic-table-{DIM}")


def bench_training(sizes: Sequence[int], effort: str) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        traits, samples, table = synthetic_samples(n, rng)
        cached = CachedEmbedder(table, MemoryStore(max_items=n + 1_000))
        # Warm the cache (samples and the pole texts the engine writes): the timed training must not embed.
        train(traits, samples, embedder=cached, effort=effort)
        misses_before = cached.misses
        wall, cpu = time.perf_counter(), time.process_time()
        result = train(traits, samples, embedder=cached, effort=effort)
        seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
        assert cached.misses == misses_before, "training re-embedded cached texts"
        aucs = [m.get("roc_auc") for m in result.metrics.values()]
        rows.append(
            {
                "samples": n,
                "traits": len(traits),
                "effort": effort,
                "train_s": seconds,
                "train_cpu_s": cpu_seconds,
                "mean_roc_auc": float(np.mean([a for a in aucs if a is not None])) if aucs else None,
            }
        )
        print(f"  trained {n:>7,} samples in {seconds:.2f} s ({cpu_seconds:.2f} s CPU)", flush=True)
    return rows


def markdown(result: dict) -> str:
    s = result["scoring"]
    lines = [
        f"Speed on {result['machine']['cpus']} CPUs ({result['machine']['processor']}), "
        f"{s['texts']:,} politeness texts, best of {s['repeats']} runs; wall-clock seconds "
        f"(CPU seconds of the process, all threads, in parentheses). Load average at the start: "
        f"{result['machine']['load_average']}.",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| raw MiniLM encode | {s['raw_encode_texts_per_s']:.0f} texts/s "
        f"({s['raw_encode_s']:.1f} s, {s['raw_encode_cpu_s']:.1f} s CPU) | |",
        f"| local scoring, cold cache | {s['score_cold_texts_per_s']:.0f} texts/s "
        f"({s['score_cold_s']:.1f} s, {s['score_cold_cpu_s']:.1f} s CPU): "
        f"**{s['score_vs_raw_ratio']:.2f}×** raw ({s['score_vs_raw_cpu_ratio']:.2f}× by CPU time) | ≥ 0.9× |",
        f"| re-scoring, warm cache | {s['score_warm_texts_per_s']:,.0f} texts/s "
        f"(**{s['warm_speedup']:,.0f}×** cold) | ≥ 50× |",
    ]
    base = None
    for row in result["training"]:
        growth = ""
        if base is not None:
            growth = f", {row['train_s'] / base['train_s']:.1f}× the time of {base['samples']:,} "
            growth += f"for {row['samples'] / base['samples']:.0f}× the samples"
        target = "≤ 2 s" if row["samples"] == 10_000 else "near-linear"
        lines.append(
            f"| train {row['samples']:,} samples / {row['traits']} traits, effort {row['effort']} "
            f"| **{row['train_s']:.2f} s** ({row['train_cpu_s']:.2f} s CPU){growth} | {target} |"
        )
        base = row
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and no 100k run (smoke test)")
    parser.add_argument("--effort", default="low")
    args = parser.parse_args(argv)

    texts, quality = load_politeness()
    if len(texts) < N_TEXTS + N_TRAIN_TEXTS:
        raise SystemExit(f"{POLITENESS} has only {len(texts)} usable rows")
    score_texts = texts[:N_TEXTS]
    minilm = MiniLMEmbedder()
    print("training the politeness snapshot ...", flush=True)
    snapshot = politeness_snapshot(minilm, texts[-N_TRAIN_TEXTS:], quality[-N_TRAIN_TEXTS:])
    print("timing encode vs scoring ...", flush=True)
    scoring = bench_scoring(score_texts, snapshot, minilm, repeats=1 if args.quick else 3)
    print("timing training ...", flush=True)
    sizes = TRAIN_SIZES[:2] if args.quick else TRAIN_SIZES
    training = bench_training(sizes, args.effort)

    import onnxruntime

    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__,
        },
        "embedder": minilm.id,
        "dataset": f"stanford_politeness/wikipedia.annotated.csv: first {N_TEXTS:,} requests scored, "
        f"last {N_TRAIN_TEXTS} used to train the snapshot",
        "scoring": scoring,
        "training": training,
        "training_note": __doc__.split("(c)")[1].split("Prints")[0].strip(),
        "quick": args.quick,
        "median_raw_s": statistics.median(scoring["all_runs"]["raw_s"]),
    }
    table = markdown(result)
    print()
    print(table)
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        result["markdown"] = table
        RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
