"""Labelling benchmark: suggestions vs random labelling, and the speed of suggesting from a 100,000-text pool.

    python -m benchmarks.labelling [--repeats 8] [--batch 8] [--budget N] [--datasets politeness ...]
                                   [--skip-speed]

Data: the quality benchmark's datasets, read from ../shared/datasets beside the checkout (or
$SCORING_DATASETS).

Simulation (per dataset, MiniLM embeddings cached as in benchmarks.quality): the dataset's labelled pool plays
the unlabelled pool and its labels play the analyst. Each repeat starts both arms from the same 4 random texts
per pole, then adds `--batch` labels a round, either the service's suggestions (`core.engine.suggest`, mode
`auto`, called as the service calls it: the pool's embeddings, the labels so far, those texts excluded, the
trait's pole-text prior) or uniformly random unlabelled texts. Both arms count every label, the 8 start
labels included.

After every round the trait is trained exactly as the service trains a draft (`core.engine.train`, effort
`medium`, the pole-text prior, the dataset's trait definition from benchmarks.quality) and scored on the
dataset's fixed held-out test pool (ROC-AUC). The target is the mean test AUC of the same training on 64
random texts per pole (20 draws): the figure the quality benchmark reports for 64 per pole.

"Labels needed" is the first label count at which the arm's mean AUC curve (over the repeats, which share
their label counts) reaches the target; the budget + 1 when it never does within the budget. The spread is
the per-repeat first crossing (median and range; a repeat that never crosses counts as budget + 1).
"Mean AUC, 8 to 128 labels": the mean curve's average over those label counts (the area under the learning
curve), a steadier comparison of the arms than a first crossing.
Speed: `suggest` on 100,000 random unit vectors of MiniLM's 384 dimensions (the service's in-memory pool
matrix), with 64 labels, best of 3 per mode. Writes benchmarks/results/labelling.json.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality import LOADERS, RESULTS, Dataset, LookupEmbedder, embed_cached
from benchmarks.quality import _auc as trained_auc
from core.engine import Sample
from core.engine.suggest import pole_prior, suggest
from core.engine.text_utils import stable_seed
from core.engine.training import PRIOR_STRENGTH
from harness.datasets import datasets_dir

START_PER_POLE = 4
TARGET_PER_POLE = 64
TARGET_DRAWS = 20
#: Labels per arm: 256, and 384 for abuse, where random labels rarely reach the rare pole and need more.
BUDGETS = {"abuse": 384}
DEFAULT_BUDGET = 256


def _auc(ds: Dataset, lookup: LookupEmbedder, rows: Sequence[int] | np.ndarray) -> float:
    """Test AUC of the service's training (`train`, effort medium, with the prior) on these pool rows."""
    samples = [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i])) for i in rows]
    return trained_auc(ds, lookup, samples, PRIOR_STRENGTH)[0]


def _target(ds: Dataset, lookup: LookupEmbedder) -> tuple[float, float]:
    aucs = []
    for draw in range(TARGET_DRAWS):
        rng = np.random.default_rng(stable_seed("labelling-target", ds.name, draw))
        chosen = np.concatenate(
            [rng.choice(np.flatnonzero(ds.pool_y == pole), TARGET_PER_POLE, replace=False) for pole in (1, 0)]
        )
        aucs.append(_auc(ds, lookup, chosen))
    return float(np.mean(aucs)), float(np.std(aucs, ddof=1))


def _run(
    ds: Dataset,
    lookup: LookupEmbedder,
    X: np.ndarray,
    start: np.ndarray,
    strategy: str,
    batch: int,
    budget: int,
    seed: int,
) -> list[float]:
    """The test AUC after the start and after every round, up to `budget` labels."""
    rng = np.random.default_rng(seed)
    prior = pole_prior(ds.trait, lookup)
    y = ds.pool_y.astype(np.float64)
    labelled = [int(i) for i in start]
    curve = [_auc(ds, lookup, labelled)]
    while len(labelled) < budget:
        taken = np.zeros(len(X), dtype=bool)
        taken[labelled] = True
        k = min(batch, budget - len(labelled))
        if strategy == "random":
            picks = [int(i) for i in rng.choice(np.flatnonzero(~taken), k, replace=False)]
        else:
            picks = suggest(X, X[labelled], y[labelled], k=k, mode="auto", exclude=taken, prior=prior).indices
            if len(picks) < k:  # the pool ran out of suggestible texts: cannot happen at these sizes
                raise RuntimeError(f"suggest returned {len(picks)} of {k}")
        labelled += picks
        curve.append(_auc(ds, lookup, labelled))
    return curve


def _crossing(counts: list[int], curve: Sequence[float], target: float, budget: int) -> int:
    return next((n for n, auc in zip(counts, curve, strict=True) if auc >= target), budget + 1)


def simulate(name: str, repeats: int, batch: int, budget: int) -> dict[str, Any]:
    ds = LOADERS[name](datasets_dir())
    lookup = embed_cached(ds)
    X = lookup.encode(ds.pool_texts).astype(np.float32)
    target, target_sd = _target(ds, lookup)
    counts = [2 * START_PER_POLE + batch * r for r in range((budget - 2 * START_PER_POLE) // batch + 1)]
    curves: dict[str, list[list[float]]] = {"suggest": [], "random": []}
    for r in range(repeats):
        rng = np.random.default_rng(stable_seed("labelling-start", name, r))
        start = np.concatenate(
            [rng.choice(np.flatnonzero(ds.pool_y == pole), START_PER_POLE, replace=False) for pole in (1, 0)]
        )
        for strategy, runs in curves.items():
            seed = stable_seed("labelling", name, r)
            runs.append(_run(ds, lookup, X, start, strategy, batch, budget, seed))
        print(f"  {name} repeat {r + 1}/{repeats} done", flush=True)
    out: dict[str, Any] = {
        "dataset": name,
        "pool": len(X),
        "pool_positive_share": round(float(ds.pool_y.mean()), 3),
        "test": len(ds.test_texts),
        "target_auc": round(target, 4),
        "target_auc_sd": round(target_sd, 4),
        "label_counts": counts,
    }
    for strategy, runs in curves.items():
        mean = np.mean(runs, axis=0)
        per_run = [_crossing(counts, c, target, budget) for c in runs]
        out[strategy] = {
            "needed": _crossing(counts, mean.tolist(), target, budget),
            "runs_needed": per_run,
            "runs_needed_median": float(np.median(per_run)),
            "mean_curve": [round(float(a), 4) for a in mean],
            "auc_at_64": round(float(mean[counts.index(64)]), 4) if 64 in counts else None,
            "auc_at_budget": round(float(mean[-1]), 4),
            # The learning curve's mean up to 128 labels: less noisy than a first crossing.
            "mean_auc_to_128": round(float(mean[: counts.index(128) + 1].mean()), 4),
        }
    s, r_ = out["suggest"], out["random"]
    out["ratio"] = round(s["needed"] / r_["needed"], 3)
    return out


def speed(n: int = 100_000, dim: int = 384) -> dict[str, float]:
    rng = np.random.default_rng(0)
    pool = rng.standard_normal((n, dim)).astype(np.float32)
    pool /= np.linalg.norm(pool, axis=1, keepdims=True)
    labelled = pool[:64]
    q = np.r_[np.ones(32), np.zeros(32)]
    exclude = np.zeros(n, dtype=bool)
    exclude[:64] = True
    times: dict[str, float] = {}
    for mode in ("auto", "typical", "uncertain", "diverse", "positive"):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            suggest(pool, labelled, q, k=20, mode=mode, exclude=exclude)
            best = min(best, time.perf_counter() - start)
        times[mode] = round(best, 3)
    return times


def _cell(row: dict[str, Any], strategy: str, budget: int) -> str:
    arm = row[strategy]
    needed = arm["needed"]
    runs = arm["runs_needed"]
    shown = f"> {budget}" if needed > budget else str(needed)
    return f"{shown} (median {np.median(runs):.0f}, {min(runs)}–{max(runs)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--budget", type=int, help=f"labels per arm (default {DEFAULT_BUDGET}, {BUDGETS})")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS / "labelling.json")
    args = parser.parse_args(argv)
    budgets = {name: args.budget or BUDGETS.get(name, DEFAULT_BUDGET) for name in args.datasets}
    simulation: list[dict[str, object]] = []
    results: dict[str, object] = {
        "batch": args.batch,
        "repeats": args.repeats,
        "budget": budgets,
        "simulation": simulation,
    }
    if not args.skip_speed:
        results["speed_100k_s"] = speed()
        print("suggest on 100,000 x 384 (best of 3, s):", results["speed_100k_s"], flush=True)
    rows = []
    for name in args.datasets:
        row = simulate(name, args.repeats, args.batch, budgets[name])
        rows.append(row)
        simulation.append(row)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(
        "| dataset | target AUC | needed: suggestions | random | ratio | AUC at 64: sugg. / random "
        "| mean AUC, 8 to 128 labels |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        budget = budgets[str(row["dataset"])]
        s, r = row["suggest"], row["random"]
        print(
            f"| {row['dataset']} | {row['target_auc']:.3f} | {_cell(row, 'suggest', budget)} "
            f"| {_cell(row, 'random', budget)} | {row['ratio']:.2f} "
            f"| {s['auc_at_64']:.3f} / {r['auc_at_64']:.3f} "
            f"| {s['mean_auc_to_128']:.4f} / {r['mean_auc_to_128']:.4f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
