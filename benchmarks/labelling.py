"""Labelling benchmark: suggestions vs random labelling, and the speed of suggesting from a 100,000-text pool.

    python -m benchmarks.labelling [--repeats 5] [--batch 8] [--datasets politeness ...] [--skip-speed]

Simulation (per dataset, MiniLM embeddings cached as in benchmarks.quality): the dataset's labelled pool plays
the unlabelled pool and its labels play the analyst. Each repeat starts from the same 4 random texts per pole
for both strategies, then adds `--batch` labels a round, either the service's suggestions
(`core.engine.suggest`, mode `auto`, the texts labelled so far excluded) or uniformly random texts. After
every round the trait is fitted (`balanced_cosine`, the engine's trait model) and scored on the fixed held-out
test pool (ROC-AUC). The target is the mean test AUC of 64 random texts per pole (20 draws); "labels needed"
is the first label count whose AUC reaches it (mean over repeats; a run that never reaches it counts as the
budget). Speed: `suggest` on 100,000 random unit vectors of MiniLM's 384 dimensions (the service's
in-memory pool matrix), with 64 labels, best of 3 per mode. Writes benchmarks/results/labelling.json.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from benchmarks.quality import LOADERS, RESULTS, datasets_dir, embed_cached
from core.engine.suggest import suggest
from core.engine.text_utils import stable_seed
from core.engine.trait_model import BalancedCosineTrait

START_PER_POLE = 4
TARGET_PER_POLE = 64
BUDGET = 256  # labels at most, start included


def _auc(X: np.ndarray, y: np.ndarray, test_X: np.ndarray, test_y: np.ndarray) -> float:
    if y.min() == y.max():
        return 0.5
    fit = BalancedCosineTrait(shrinkage=1.0, folds=2).fit(X, y.astype(np.float64))
    return float(roc_auc_score(test_y, test_X @ fit.w_))


def _target(X: np.ndarray, y: np.ndarray, test_X: np.ndarray, test_y: np.ndarray, name: str) -> float:
    aucs = []
    for draw in range(20):
        rng = np.random.default_rng(stable_seed("labelling-target", name, draw))
        chosen = np.concatenate(
            [rng.choice(np.flatnonzero(y == pole), TARGET_PER_POLE, replace=False) for pole in (1, 0)]
        )
        aucs.append(_auc(X[chosen], y[chosen], test_X, test_y))
    return float(np.mean(aucs))


def _run(
    X: np.ndarray,
    y: np.ndarray,
    test_X: np.ndarray,
    test_y: np.ndarray,
    start: np.ndarray,
    strategy: str,
    batch: int,
    seed: int,
) -> list[tuple[int, float]]:
    rng = np.random.default_rng(seed)
    labelled = list(start)
    curve = [(len(labelled), _auc(X[labelled], y[labelled], test_X, test_y))]
    while len(labelled) < BUDGET:
        taken = np.zeros(len(X), dtype=bool)
        taken[labelled] = True
        if strategy == "random":
            picks = list(rng.choice(np.flatnonzero(~taken), batch, replace=False))
        else:
            picks = suggest(X, X[labelled], y[labelled].astype(np.float64), k=batch, exclude=taken).indices
            if not picks:
                break
        labelled += [int(i) for i in picks]
        curve.append((len(labelled), _auc(X[labelled], y[labelled], test_X, test_y)))
    return curve


def _needed(curve: list[tuple[int, float]], target: float) -> int:
    return next((n for n, auc in curve if auc >= target), BUDGET)


def simulate(name: str, repeats: int, batch: int) -> dict[str, object]:
    ds = LOADERS[name](datasets_dir())
    lookup = embed_cached(ds)
    X = lookup.encode(ds.pool_texts).astype(np.float32)
    test_X = lookup.encode(ds.test_texts).astype(np.float32)
    y, test_y = ds.pool_y, ds.test_y
    target = _target(X, y, test_X, test_y, name)
    needed: dict[str, list[int]] = {"suggest": [], "random": []}
    final: dict[str, list[float]] = {"suggest": [], "random": []}
    for r in range(repeats):
        rng = np.random.default_rng(stable_seed("labelling-start", name, r))
        start = np.concatenate(
            [rng.choice(np.flatnonzero(y == pole), START_PER_POLE, replace=False) for pole in (1, 0)]
        )
        for strategy in needed:
            curve = _run(X, y, test_X, test_y, start, strategy, batch, stable_seed("labelling", name, r))
            needed[strategy].append(_needed(curve, target))
            final[strategy].append(curve[-1][1])
    out = {
        "dataset": name,
        "pool": len(X),
        "target_auc": round(target, 4),
        "suggest_needed": float(np.mean(needed["suggest"])),
        "random_needed": float(np.mean(needed["random"])),
        "suggest_runs": needed["suggest"],
        "random_runs": needed["random"],
        "suggest_auc_at_budget": round(float(np.mean(final["suggest"])), 4),
        "random_auc_at_budget": round(float(np.mean(final["random"])), 4),
    }
    out["ratio"] = round(out["suggest_needed"] / out["random_needed"], 3)  # type: ignore[operator]
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
    for mode in ("diverse", "uncertain", "positive"):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            suggest(pool, labelled, q, k=20, mode=mode, exclude=exclude)
            best = min(best, time.perf_counter() - start)
        times[mode] = round(best, 3)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS / "labelling.json")
    args = parser.parse_args(argv)
    results: dict[str, object] = {"batch": args.batch, "repeats": args.repeats, "simulation": []}
    if not args.skip_speed:
        results["speed_100k_s"] = speed()
        print("suggest on 100,000 x 384 (best of 3, s):", results["speed_100k_s"], flush=True)
    print("| dataset | target AUC (64/pole random) | labels needed: suggestions | random | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name in args.datasets:
        row = simulate(name, args.repeats, args.batch)
        results["simulation"].append(row)  # type: ignore[union-attr]
        print(
            f"| {name} | {row['target_auc']:.3f} | {row['suggest_needed']:.0f} | {row['random_needed']:.0f} "
            f"| {row['ratio']:.2f} |",
            flush=True,
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
