"""Sample flags benchmark: `python -m benchmarks.flags [--part speed|noise|demo|all] [--draws D]`.

`speed`: the Samples page's flags (`core.engine.flags.flag_samples`: out-of-fold mislabels and kNN outliers)
on N samples of one trait, the worst case (the neighbour search is quadratic within a trait). Texts: Stanford
politeness requests, read from ../shared/datasets at run time; a request is a positive sample when its
politeness rank is in the upper half. The embedder is wrapped in the in-memory cache the page uses for stored
samples, so the first check embeds every text and a second one (after fixing a few) finds them all cached.

`noise`: how far the "likely mislabelled" flag can be trusted. The labelled pools of the politeness,
subjectivity and abuse datasets (`benchmarks.quality`'s loaders, vectors cached under benchmarks/.cache/) get
5% and 10% of their labels flipped at random (D draws each, seed "flags-noise-check"; the engine's constants
were chosen on 3 other draws, `--seed flags-noise --draws 3`); the flag's precision (flipped among flagged)
and recall (flagged among flipped) are measured for the engine's rule and, on the very same out-of-fold
probabilities (logistic regression, `oof_scores`), for cleanlab's `find_label_issues`; and for the rules
before, on the prototype model's out-of-fold scores (`prototype_oof_scores`): the same neighbours' evidence
("before") and the first margin rule ("old margin"). cleanlab is in the dev extra; the 2.9 wheel's LICENSE is
Apache-2.0, as pyproject.toml says. `--datasets politeness-wikipedia politeness-stack-exchange` split the
politeness pool by community (the same vectors): a diagnostic of why politeness is hard.

`demo`: the share of each demo model's samples (`sample_data/`, clean labels) flagged "likely mislabelled".

Prints the figures and writes benchmarks/results/flags.json (speed; flags_<N>.json for another --samples N),
flags_noise.json (noise and demo; flags_noise_<embedder>.json for another --embedder).
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
from unittest import mock

import numpy as np
from scipy.special import expit
from sklearn.metrics import roc_auc_score

from benchmarks.evaluation import load
from core.embedders import get_embedder
from core.embedders.cache import CachedEmbedder, MemoryStore
from core.engine import flags
from core.engine.flags import (
    LABEL_NEIGHBOURS,
    flag_samples,
    likely_mislabelled,
    mislabel_evidence,
    nearest_neighbours,
    oof_scores,
)
from core.engine.text_utils import stable_seed
from core.engine.trait_model import BalancedCosineTrait
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results" / "flags.json"
NOISE_RESULTS = RESULTS.with_name("flags_noise.json")
DATASETS = ("politeness", "subjectivity", "abuse")
COMMUNITIES = {"politeness-wikipedia": True, "politeness-stack-exchange": False}  # True: the Wikipedia rows
NOISE_RATES = (0.05, 0.10)
REPORT_SEED = "flags-noise-check"  # docs/benchmarks.md's draws; the constants: seed "flags-noise"
OLD_MARGIN = 0.25  # the first rule: a positive scored below 0.25, a negative above 0.75
Rule = Callable[[np.ndarray, np.ndarray, np.ndarray], "np.ndarray | None"]  # (labels, LR oof, prototype oof)


def prototype_oof_scores(X: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """The out-of-fold scores the flags used before `oof_scores`: the prototype axis (`BalancedCosineTrait`,
    shrinkage 1, 5 folds), each held-out raw score calibrated with the fitted slope."""
    model = BalancedCosineTrait(shrinkage=1.0, folds=5).fit(X, q)
    if model.oof_raw_ is None:
        return None
    return np.asarray(expit(model.k_ * model.oof_raw_.mean(axis=0)))


def margin_rule(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return ((y == 1) & (p < OLD_MARGIN)) | ((y == 0) & (p > 1 - OLD_MARGIN))


def cleanlab_rule(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    from cleanlab.filter import find_label_issues

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


def pool(name: str, embedder_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, 0/1 labels) of a dataset's labelled pool; a politeness community is a subset of the
    politeness pool (its quartile labels are per community already, `benchmarks.quality.load_politeness`)."""
    import pandas as pd

    from benchmarks.quality import LOADERS, embed_cached

    ds = LOADERS[name if name in LOADERS else "politeness"](datasets_dir())
    X = embed_cached(ds, embedder_name).encode(ds.pool_texts)
    y = ds.pool_y.astype(int)
    if name in LOADERS:
        return X, y
    wiki = pd.read_csv(datasets_dir() / "stanford_politeness" / "wikipedia.annotated.csv")
    in_wiki = set(wiki["Request"].astype(str).str.strip())
    keep = np.array([(t in in_wiki) == COMMUNITIES[name] for t in ds.pool_texts])
    return X[keep], y[keep]


def noise(draws: int, embedder_name: str, datasets: list[str], seed: str = REPORT_SEED) -> dict[str, Any]:
    out: dict[str, Any] = {"draws": draws, "embedder": embedder_name, "seed": seed, "rows": []}
    for name in datasets:
        X, y = pool(name, embedder_name)
        neighbours = nearest_neighbours(X, LABEL_NEIGHBOURS)[1]  # the texts stay; only labels change
        rules: dict[str, Rule] = {
            "engine": lambda y, p, _: likely_mislabelled(y.astype(float), p, neighbours),  # noqa: B023
            "cleanlab": lambda y, p, _: cleanlab_rule(y, p),
            "before": lambda y, _, p0: likely_mislabelled(y.astype(float), p0, neighbours),  # noqa: B023
            "old_margin": lambda y, _, p0: margin_rule(y, p0),
        }

        def probabilities(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            p, p0 = oof_scores(X, labels.astype(float)), prototype_oof_scores(X, labels.astype(float))  # noqa: B023
            assert p is not None and p0 is not None
            return p, p0

        p, p0 = probabilities(y)
        clean: dict[str, Any] = {"dataset": name, "noise": 0.0, "samples": len(y)}
        clean["oof_auc"] = round(float(roc_auc_score(y, p)), 4)
        clean["prototype_oof_auc"] = round(float(roc_auc_score(y, p0)), 4)
        for r, rule in rules.items():
            clean[f"{r}_flagged_share"] = round(float(np.mean(rule(y, p, p0))), 4)
        out["rows"].append(clean)
        print(json.dumps(clean), flush=True)
        for rate in NOISE_RATES:
            for draw in range(draws):
                rng = np.random.default_rng(stable_seed(seed, name, rate, draw))
                flipped = np.zeros(len(y), dtype=bool)
                flipped[rng.choice(len(y), size=round(rate * len(y)), replace=False)] = True
                noisy = np.where(flipped, 1 - y, y)
                p, p0 = probabilities(noisy)
                row: dict[str, Any] = {"dataset": name, "noise": rate, "draw": draw, "samples": len(y)}
                # The best any threshold could do: on the held-out probability alone and on the evidence.
                row["score_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(np.where(noisy == 1, 1 - p, p), flipped), 4
                )
                row["evidence_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(mislabel_evidence(noisy.astype(float), p, neighbours), flipped), 4
                )
                for r, rule in rules.items():
                    flagged = rule(noisy, p, p0)
                    assert flagged is not None
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
    for name in dict.fromkeys(r["dataset"] for r in rows):
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
    # Side by side, interleaved: the engine's flags and the same with the prototype's out-of-fold scores.
    warm: list[float] = []
    before: list[float] = []
    before_flagged: list[dict[str, Any]] = []
    for _ in range(repeats):
        started = time.perf_counter()
        again = flag_samples(rows, embedder)
        warm.append(time.perf_counter() - started)
        assert again == flagged  # the cache changes nothing but the time
        with mock.patch.object(flags, "oof_scores", prototype_oof_scores):
            started = time.perf_counter()
            before_flagged = flag_samples(rows, embedder)
            before.append(time.perf_counter() - started)
    kinds = [f["flag"] for f in flagged]
    return {
        "samples": len(rows),
        "embedder": embedder_name,
        "first_check_s": round(cold, 2),
        "cached_check_s": round(min(warm), 2),
        "cached_runs_s": [round(w, 2) for w in warm],
        "cached_check_prototype_oof_s": round(min(before), 2),
        "cached_runs_prototype_oof_s": [round(w, 2) for w in before],
        "mislabel_flags": kinds.count("likely mislabelled"),
        "mislabel_flags_prototype_oof": [f["flag"] for f in before_flagged].count("likely mislabelled"),
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
    parser.add_argument(
        "--datasets", nargs="+", default=list(DATASETS), choices=[*DATASETS, *COMMUNITIES], help="noise part"
    )
    parser.add_argument(
        "--seed", default=REPORT_SEED, help="the draws' seed (\"flags-noise\": the rule's tuning draws)"
    )
    args = parser.parse_args()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    if args.part in ("speed", "all"):
        result = run(args.samples, args.embedder, args.repeats)
        # Another size's figures go to a file of their own (flags_<samples>.json).
        speed_out = RESULTS if args.samples == 10_000 else RESULTS.with_stem(f"flags_{args.samples}")
        speed_out.write_text(json.dumps(result, indent=2) + "\n")
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
        key = (
            part if part == "demo" or tuple(args.datasets) == DATASETS else f"noise {' '.join(args.datasets)}"
        ) + ("" if part == "demo" or args.seed == REPORT_SEED else f" seed {args.seed}")
        before = os.getloadavg()[0]
        if part == "noise":
            found = noise(args.draws, args.embedder, args.datasets, args.seed)
            figures: dict[str, Any] = {
                "embedder": args.embedder,
                "summary": summary(found["rows"]),
                "rows": found["rows"],
            }
        else:
            figures = {"models": demo(args.embedder)}
        report[key] = figures | {
            "load_average_before": round(before, 1),
            "load_average_after": round(os.getloadavg()[0], 1),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "measured_at": datetime.now().isoformat(timespec="seconds"),
        }
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps({k: v for k, v in report[key].items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    main()
