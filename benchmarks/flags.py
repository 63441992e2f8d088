"""Sample flags benchmark: `python -m benchmarks.flags [--part speed|noise|demo|all] [--draws D]`.

`speed`: the Samples page's flags (`core.engine.flags.flag_samples`: out-of-fold mislabels and kNN outliers)
on N samples of one trait, the worst case (the neighbour search is quadratic within a trait). Texts: Stanford
politeness requests, read from ../shared/datasets at run time; a request is a positive sample when its
politeness rank is in the upper half. The embedder is wrapped in the in-memory cache the page uses for stored
samples, so the first check embeds every text and a second one (after fixing a few) finds them all cached.

`noise`: how far the "likely mislabelled" flag can be trusted. The labelled pools of the politeness,
subjectivity and abuse datasets (`benchmarks.quality`'s loaders, MiniLM vectors cached under
benchmarks/.cache/) get 5% and 10% of their labels flipped at random (D draws each); the flag's precision
(flipped among flagged) and recall (flagged among flipped) are measured for the engine's rule and, on the very
same out-of-fold probabilities, for the old margin rule and for cleanlab's `find_label_issues` (cleanlab is in
the dev extra; the 2.9 wheel's LICENSE is Apache-2.0, as pyproject.toml says).

`demo`: the share of each demo model's samples (`sample_data/`, clean labels) flagged "likely mislabelled".

Prints the figures and writes benchmarks/results/flags.json (speed), flags_noise.json (noise and demo).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.evaluation import load
from core.embedders import get_embedder
from core.embedders.cache import CachedEmbedder, MemoryStore
from core.engine.flags import (
    LABEL_NEIGHBOURS,
    flag_samples,
    likely_mislabelled,
    mislabel_evidence,
    nearest_neighbours,
    oof_scores,
)
from core.engine.text_utils import stable_seed

RESULTS = Path(__file__).resolve().parent / "results" / "flags.json"
NOISE_RESULTS = RESULTS.with_name("flags_noise.json")
DATASETS = ("politeness", "subjectivity", "abuse")
NOISE_RATES = (0.05, 0.10)
OLD_MARGIN = 0.25  # the rule before this benchmark: a positive scored below 0.25, a negative above 0.75


def margin_rule(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return ((y == 1) & (p < OLD_MARGIN)) | ((y == 0) & (p > 1 - OLD_MARGIN))


def cleanlab_rule(y: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    try:
        from cleanlab.filter import find_label_issues
    except ImportError:
        return None
    return np.asarray(find_label_issues(labels=y, pred_probs=np.column_stack([1 - p, p])), dtype=bool)


def precision_recall(flagged: np.ndarray, flipped: np.ndarray) -> tuple[float, float, int]:
    hits = int((flagged & flipped).sum())
    return (
        (hits / flagged.sum() if flagged.any() else float("nan")),
        hits / max(int(flipped.sum()), 1),
        int(flagged.sum()),
    )


def precision_at_recall(evidence: np.ndarray, flipped: np.ndarray, recall: float = 0.5) -> float:
    """Best possible precision at that recall of a threshold on `evidence` against the given labels: how well
    it ranks the flipped samples first, whatever the threshold."""
    order = np.argsort(-evidence, kind="stable")
    hits = np.cumsum(flipped[order])
    need = int(np.ceil(recall * flipped.sum()))
    at = int(np.searchsorted(hits, need))  # first position where recall reaches the target
    return float(hits[at] / (at + 1))


def noise(draws: int, embedder_name: str) -> dict[str, Any]:
    from benchmarks.quality import LOADERS, datasets_dir, embed_cached

    out: dict[str, Any] = {"draws": draws, "embedder": embedder_name, "rows": []}
    for name in DATASETS:
        ds = LOADERS[name](datasets_dir())
        X = embed_cached(ds, embedder_name).encode(ds.pool_texts)
        neighbours = nearest_neighbours(X, LABEL_NEIGHBOURS)[1]  # the texts stay; only labels change
        rules: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray | None]] = {
            "engine": lambda y, p: likely_mislabelled(y.astype(float), p, neighbours),  # noqa: B023
            "old_margin": margin_rule,
            "cleanlab": cleanlab_rule,
        }
        y = ds.pool_y.astype(int)
        clean_p = oof_scores(X, y.astype(float))
        assert clean_p is not None
        out["rows"].append(
            {"dataset": name, "noise": 0.0, "samples": len(y)}
            | {
                f"{r}_flagged_share": (lambda f: None if f is None else round(float(f.mean()), 4))(
                    rule(y, clean_p)
                )
                for r, rule in rules.items()
            }
        )
        for rate in NOISE_RATES:
            for draw in range(draws):
                # Not the draws the rule's constants were chosen on (seed "flags-noise", docs/engine.md).
                rng = np.random.default_rng(stable_seed("flags-noise-check", name, rate, draw))
                flipped = np.zeros(len(y), dtype=bool)
                flipped[rng.choice(len(y), size=round(rate * len(y)), replace=False)] = True
                noisy = np.where(flipped, 1 - y, y)
                p = oof_scores(X, noisy.astype(float))
                assert p is not None
                row: dict[str, Any] = {"dataset": name, "noise": rate, "draw": draw, "samples": len(y)}
                # The best any threshold could do, on the held-out score alone and on the engine's evidence.
                score_against = np.where(noisy == 1, 1 - p, p)
                evidence = mislabel_evidence(noisy.astype(float), p, neighbours)
                row["score_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(score_against, flipped), 4
                )
                row["evidence_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(evidence, flipped), 4
                )
                for r, rule in rules.items():
                    flagged = rule(noisy, p)
                    if flagged is None:
                        continue
                    prec, rec, count = precision_recall(flagged, flipped)
                    row |= {
                        f"{r}_precision": round(prec, 4),
                        f"{r}_recall": round(rec, 4),
                        f"{r}_flagged": count,
                    }
                out["rows"].append(row)
                print(json.dumps(row), flush=True)
    return out


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and range over draws per dataset and noise rate."""
    table = []
    for name in DATASETS:
        for rate in NOISE_RATES:
            mine = [r for r in rows if r["dataset"] == name and r["noise"] == rate]
            if not mine:
                continue
            entry: dict[str, Any] = {"dataset": name, "noise": rate, "draws": len(mine)}
            for key in mine[0]:
                if key.endswith(("_precision", "_recall", "_0.5")):
                    values = np.array([r[key] for r in mine], dtype=float)
                    entry[key] = [
                        round(float(np.nanmean(values)), 3),
                        round(float(np.nanmin(values)), 3),
                        round(float(np.nanmax(values)), 3),
                    ]
            table.append(entry)
    return table


def demo(embedder_name: str) -> list[dict[str, Any]]:
    """Share of each demo model's (clean) samples flagged "likely mislabelled", per model."""
    from core.demo import read_demo_model, read_manifest

    embedder = get_embedder(embedder_name)
    out = []
    for entry in read_manifest():
        model = read_demo_model(entry.slug)
        rows = [dict(s, id=i) for i, s in enumerate(model.samples)]
        flagged = flag_samples(rows, embedder)
        mislabels = [f for f in flagged if f["flag"] == "likely mislabelled"]
        out.append(
            {
                "model": entry.slug,
                "samples": len(rows),
                "likely_mislabelled": len(mislabels),
                "share": round(len(mislabels) / max(len(rows), 1), 4),
                "outliers": sum(f["flag"] == "outlier" for f in flagged),
                "flagged_texts": [f["text"][:80] for f in mislabels],
            }
        )
        print(json.dumps(out[-1]), flush=True)
    return out


def run(samples: int, embedder_name: str, repeats: int) -> dict[str, object]:
    texts = load()[:samples]
    rows = [
        {"id": i, "trait": "politeness", "text": t, "quality": 1.0 if q >= 0.5 else 0.0}
        for i, (t, q) in enumerate(texts)
    ]
    embedder = CachedEmbedder(get_embedder(embedder_name), MemoryStore(max_items=len(rows) + 1))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    flagged = flag_samples(rows, embedder)
    cold = time.perf_counter() - started
    warm = []
    for _ in range(repeats):
        started = time.perf_counter()
        again = flag_samples(rows, embedder)
        warm.append(time.perf_counter() - started)
        assert again == flagged  # the cache changes nothing but the time
    kinds = [f["flag"] for f in flagged]
    return {
        "samples": len(rows),
        "embedder": embedder_name,
        "first_check_s": round(cold, 2),
        "cached_check_s": round(min(warm), 2),
        "cached_runs_s": [round(w, 2) for w in warm],
        "mislabel_flags": kinds.count("likely mislabelled"),
        "outlier_flags": kinds.count("outlier"),
        "load_average_before": round(load_before, 1),
        "load_average_after": round(os.getloadavg()[0], 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all", choices=["speed", "noise", "demo", "all"])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--embedder", default="minilm", help="an embedder name or id (core.embedders)")
    parser.add_argument("--repeats", type=int, default=2, help="cached checks (the best is reported)")
    parser.add_argument("--draws", type=int, default=5, help="noise draws per dataset and rate")
    args = parser.parse_args()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    if args.part in ("speed", "all"):
        result = run(args.samples, args.embedder, args.repeats)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    # A part run alone keeps the other part's earlier figures in flags_noise.json.
    # Another embedder's figures go to a file of their own (flags_noise_<embedder>.json).
    out = (
        NOISE_RESULTS
        if args.embedder == "minilm"
        else NOISE_RESULTS.with_stem(f"flags_noise_{args.embedder}")
    )
    report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    for part in ("noise", "demo"):
        if args.part not in (part, "all"):
            continue
        before = os.getloadavg()[0]
        if part == "noise":
            found = noise(args.draws, args.embedder)
            figures: dict[str, Any] = {
                "embedder": args.embedder,
                "summary": summary(found["rows"]),
                "rows": found["rows"],
            }
        else:
            figures = {"models": demo(args.embedder)}
        report[part] = figures | {
            "load_average_before": round(before, 1),
            "load_average_after": round(os.getloadavg()[0], 1),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "measured_at": datetime.now().isoformat(timespec="seconds"),
        }
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps({k: v for k, v in report[part].items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    main()
