"""Synthesis from a pool: how many `from_traits` exemplars a human label puts on the pole they were given.

    python -m benchmarks.synthesis_pool [--pool 500] [--effort medium] [--embedder default]
        [--datasets politeness subjectivity abuse]

For each shared dataset (read in place, as benchmarks/quality.py reads them), `--pool` texts are drawn with
a fixed seed from its labelled pool and passed to `synthesize` as the model's unlabelled pool (their labels
hidden), with the dataset's trait as an analyst would type it (benchmarks.quality.TRAITS) and no samples:
the zero-shot case. The figure is the share of exemplars whose human label agrees with the pole they were
given (target >= 80 %), per pole and overall. Prints a markdown table and writes
benchmarks/results/synthesis_pool.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.quality import LOADERS
from core.embedders import get_embedder
from core.engine import synthesize
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results"


def run(name: str, pool_size: int, effort: str, embedder_name: str) -> dict[str, object]:
    ds = LOADERS[name](datasets_dir())
    rng = np.random.default_rng(0)
    chosen = rng.choice(len(ds.pool_texts), size=min(pool_size, len(ds.pool_texts)), replace=False)
    pool = [ds.pool_texts[i] for i in chosen]
    label = {ds.pool_texts[i]: int(ds.pool_y[i]) for i in chosen}
    start = time.perf_counter()
    out = synthesize([ds.trait], [], effort=effort, embedder=get_embedder(embedder_name), pool=pool)
    seconds = time.perf_counter() - start
    given = [(1 if s.quality == 1.0 else 0, label[s.text]) for s in out]
    agree = {pole: [human == pole for p, human in given if p == pole] for pole in (1, 0)}
    every = agree[1] + agree[0]
    return {
        "dataset": name,
        "pool": len(pool),
        "pool_positive_share": round(float(np.mean(list(label.values()))), 3),
        "exemplars": len(out),
        "agree": round(float(np.mean(every)), 3) if every else None,
        "agree_positive": round(float(np.mean(agree[1])), 3) if agree[1] else None,
        "agree_negative": round(float(np.mean(agree[0])), 3) if agree[0] else None,
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--effort", default="medium")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS))
    args = parser.parse_args()
    rows = [run(name, args.pool, args.effort, args.embedder) for name in args.datasets]
    print("| dataset | pool (positive share) | exemplars | agree | positive pole | negative pole | s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['pool']} ({r['pool_positive_share']}) | {r['exemplars']} | "
            f"{r['agree']} | {r['agree_positive']} | {r['agree_negative']} | {r['seconds']} |"
        )
    RESULTS.mkdir(exist_ok=True)
    doc = {"effort": args.effort, "embedder": get_embedder(args.embedder).id, "rows": rows}
    (RESULTS / "synthesis_pool.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
