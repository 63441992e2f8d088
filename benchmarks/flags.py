"""Sample flags benchmark: `python -m benchmarks.flags [--part speed|noise|agreed|demo|all] [--draws D]`.

`speed`: the Samples page's flags (`core.engine.flags.flag_samples`: out-of-fold mislabels and kNN outliers)
on N samples of one trait, the worst case (the neighbour search is quadratic within a trait). Texts: Stanford
politeness requests, read from ../shared/datasets at run time; a request is a positive sample when its
politeness rank is in the upper half. The embedder is wrapped in the in-memory cache the page uses for stored
samples, so the first check embeds every text and a second one (after fixing a few) finds them all cached.
Beside it, interleaved: the same check with the prototype's out-of-fold scores (the earlier rule), and on a
team's votes (the same texts voted by three annotators, one in ten texts contested; counted per text).

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

`agreed`: the same measurement (engine and cleanlab on the same out-of-fold probabilities, 5% and 10% flips,
D draws, seed "flags-agreed-check") on clean bases: the texts on which each dataset's raters agree
(`benchmarks.agreed`: politeness requests whose five ratings all fall on one side of the scale's middle,
ConvAbuse turns whose annotators agree, NewsSD sentences that were not a settled disagreement), so that a flag
on a hard case is not counted as a false alarm. Default embedder `core.contract.DEFAULT_EMBEDDER`; vectors
cached under benchmarks/.cache/. The target: precision >= 0.6 at recall >= 0.5 at 5% noise on each.

`demo`: the share of each demo model's samples (`sample_data/`, clean labels) flagged "likely mislabelled".

Prints the figures and writes benchmarks/results/flags.json (speed; flags_<N>.json for another --samples N),
flags_noise.json (noise and demo; flags_noise_<embedder>.json for another --embedder) and flags_agreed.json
(agreed, keyed by embedder).
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

from benchmarks import agreed
from benchmarks.evaluation import load
from core.contract import DEFAULT_EMBEDDER, pole_of
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
AGREED_RESULTS = RESULTS.with_name("flags_agreed.json")
DATASETS = ("politeness", "subjectivity", "abuse")
COMMUNITIES = {"politeness-wikipedia": True, "politeness-stack-exchange": False}  # True: the Wikipedia rows
NOISE_RATES = (0.05, 0.10)
REPORT_SEED = "flags-noise-check"  # docs/benchmarks/README.md's draws; the constants: seed "flags-noise"
AGREED_SEED = "flags-agreed-check"  # the clean bases' report draws
TUNING_SEEDS = ("flags-noise", "flags-agreed")  # the draws the rules' constants were chosen on
OLD_MARGIN = 0.25  # the first rule: a positive scored below 0.25, a negative above 0.75
Rule = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (labels, LR oof, prototype oof)


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
        (hits / int(flagged.sum()) if flagged.any() else float("nan")),
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


def recall_at_precision(evidence: np.ndarray, flipped: np.ndarray, precision: float = 0.6) -> float:
    """Highest recall a threshold on `evidence` reaches with at least that precision (0 when none does)."""
    order = np.argsort(-evidence, kind="stable")
    hits = np.cumsum(flipped[order])
    enough = hits / np.arange(1, len(hits) + 1) >= precision
    return float(hits[enough].max() / max(int(flipped.sum()), 1)) if enough.any() else 0.0


def pool(name: str, embedder_name: str, agreed_base: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, 0/1 labels) of a dataset's labelled pool, or with `agreed_base` of its clean base (the texts
    on which its raters agree, `benchmarks.agreed`). A politeness community is a subset of the politeness pool
    or base (the pool's quartile labels are per community already, `benchmarks.quality.load_politeness`)."""
    import pandas as pd

    from benchmarks.quality import LOADERS, embed_cached

    loaders = agreed.LOADERS if agreed_base else LOADERS
    ds = loaders[name if name in loaders else "politeness"](datasets_dir())
    X = embed_cached(ds, embedder_name).encode(ds.pool_texts)
    y = ds.pool_y.astype(int)
    if name in loaders:
        return X, y
    wiki = pd.read_csv(datasets_dir() / "stanford_politeness" / "wikipedia.annotated.csv")
    in_wiki = set(wiki["Request"].astype(str).str.strip())
    keep = np.array([(t in in_wiki) == COMMUNITIES[name] for t in ds.pool_texts])
    return X[keep], y[keep]


def noise(
    draws: int,
    embedder_name: str,
    datasets: list[str],
    seed: str = REPORT_SEED,
    agreed: bool = False,
) -> dict[str, Any]:
    """Flip 5% and 10% of each pool's labels, `draws` times each, and measure the rules on every draw. With
    `agreed` the pools are the clean bases (`benchmarks.agreed`) and only the engine and cleanlab are measured
    (the prototype model's rules, kept for comparison)."""
    out: dict[str, Any] = {"draws": draws, "embedder": embedder_name, "seed": seed, "rows": []}
    for name in datasets:
        X, y = pool(name, embedder_name, agreed)
        neighbours = nearest_neighbours(X, LABEL_NEIGHBOURS)[1]  # the texts stay; only labels change
        rules: dict[str, Rule] = {
            "engine": lambda y, p, _: likely_mislabelled(y.astype(float), p, neighbours),  # noqa: B023
            "cleanlab": lambda y, p, _: cleanlab_rule(y, p),
        }
        if not agreed:
            rules |= {
                "before": lambda y, _, p0: likely_mislabelled(y.astype(float), p0, neighbours),  # noqa: B023
                "old_margin": lambda y, _, p0: margin_rule(y, p0),
            }

        def probabilities(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            p = oof_scores(X, labels.astype(float))  # noqa: B023
            p0 = p if agreed else prototype_oof_scores(X, labels.astype(float))  # noqa: B023
            assert p is not None and p0 is not None
            return p, p0

        p, p0 = probabilities(y)
        p_clean = p  # the out-of-fold model that never sees a flipped label: the oracle ranking below
        clean: dict[str, Any] = {"dataset": name, "noise": 0.0, "samples": len(y), "positive": int(y.sum())}
        clean["oof_auc"] = round(float(roc_auc_score(y, p)), 4)
        if not agreed:
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
                row["oof_auc_against_clean"] = round(float(roc_auc_score(y, p)), 4)
                # The best any threshold could do: on the held-out probability alone and on the evidence.
                row["score_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(np.where(noisy == 1, 1 - p, p), flipped), 4
                )
                evidence = mislabel_evidence(noisy.astype(float), p, neighbours)
                row["evidence_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(evidence, flipped), 4
                )
                row["evidence_best_recall_at_precision_0.6"] = round(
                    recall_at_precision(evidence, flipped), 4
                )
                # The same out-of-fold model fitted on the clean labels: what the embedding allows a score to
                # do when no flipped label misleads the model (no rule can know the clean labels).
                row["oracle_best_precision_at_recall_0.5"] = round(
                    precision_at_recall(np.where(noisy == 1, 1 - p_clean, p_clean), flipped), 4
                )
                for r, rule in rules.items():
                    flagged = rule(noisy, p, p0)
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
                if key.endswith(("_precision", "_recall", "_0.5", "_0.6")):
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
    # Each text on its pole (a neutral one, quality 0.5, is on neither and left out).
    texts = [(t, pole_of(q) == "positive") for t, q in load()[:samples] if pole_of(q) != "neutral"]
    rows = [
        {"id": i, "trait": "politeness", "text": t, "quality": float(positive)}
        for i, (t, positive) in enumerate(texts)
    ]
    embedder = CachedEmbedder(get_embedder(embedder_name), MemoryStore(max_items=len(rows) + 1))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    flagged = flag_samples(rows, embedder)
    cold = time.perf_counter() - started
    # A team's data: the same texts voted by three annotators, the third on the other pole for every 10th text
    # (contested): three times the votes, the same texts to embed and check.
    team = [
        {
            "id": 3 * i + j,
            "trait": "politeness",
            "text": t,
            "annotator": who,
            "quality": float(pole != (j == 2 and i % 10 == 0)),
        }
        for i, (t, pole) in enumerate(texts)
        for j, who in enumerate(("alice", "bob", "carol"))
    ]
    # Side by side, interleaved: the engine's flags, the same with the prototype's out-of-fold scores, and the
    # team's votes.
    warm: list[float] = []
    before: list[float] = []
    voted: list[float] = []
    before_flagged: list[dict[str, Any]] = []
    team_flagged: list[dict[str, Any]] = []
    for _ in range(repeats):
        started = time.perf_counter()
        again = flag_samples(rows, embedder)
        warm.append(time.perf_counter() - started)
        assert again == flagged  # the cache changes nothing but the time
        with mock.patch.object(flags, "oof_scores", prototype_oof_scores):
            started = time.perf_counter()
            before_flagged = flag_samples(rows, embedder)
            before.append(time.perf_counter() - started)
        started = time.perf_counter()
        team_flagged = flag_samples(team, embedder)
        voted.append(time.perf_counter() - started)
    kinds = [f["flag"] for f in flagged]
    team_kinds = [f["flag"] for f in team_flagged]
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
        "team_votes": len(team),
        "cached_check_team_s": round(min(voted), 2),
        "cached_runs_team_s": [round(w, 2) for w in voted],
        "team_contested_flags": team_kinds.count("contested"),
        "team_mislabel_flags": team_kinds.count("likely mislabelled"),
        "load_average_before": round(load_before, 1),
        "load_average_after": round(os.getloadavg()[0], 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all", choices=["speed", "noise", "agreed", "demo", "all"])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument(
        "--embedder",
        help=f"an embedder name or id (core.embedders); default {DEFAULT_EMBEDDER} for the agreed part, "
        "minilm for the others (the earlier figures)",
    )
    parser.add_argument("--repeats", type=int, default=2, help="cached checks (the best is reported)")
    parser.add_argument("--draws", type=int, default=5, help="noise draws per dataset and rate")
    parser.add_argument(
        "--datasets", nargs="+", default=list(DATASETS), choices=[*DATASETS, *COMMUNITIES], help="noise part"
    )
    parser.add_argument(
        "--seed",
        help=f"the draws' seed; default {REPORT_SEED!r} (noise) and {AGREED_SEED!r} (agreed), the rules' "
        f"tuning draws were {TUNING_SEEDS}",
    )
    args = parser.parse_args()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    embedder = args.embedder or "minilm"
    if args.part in ("speed", "all"):
        result = run(args.samples, embedder, args.repeats)
        # Another size's figures go to a file of their own (flags_<samples>.json).
        speed_out = RESULTS if args.samples == 10_000 else RESULTS.with_stem(f"flags_{args.samples}")
        speed_out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    for part in ("noise", "agreed", "demo"):
        if args.part not in (part, "all"):
            continue
        subset = "" if tuple(args.datasets) == DATASETS else f" {' '.join(args.datasets)}"
        if part == "agreed":
            name = args.embedder or DEFAULT_EMBEDDER
            seed = args.seed or AGREED_SEED
            # Every embedder's figures in one file, keyed by embedder (and seed when not the report draws').
            out = AGREED_RESULTS
            key = name + subset + ("" if seed == AGREED_SEED else f" seed {seed}")
        else:
            name, seed = embedder, args.seed or REPORT_SEED
            # Another embedder's figures go to a file of their own (flags_noise_<embedder>.json); a part run
            # alone keeps the other part's earlier figures.
            out = NOISE_RESULTS if name == "minilm" else NOISE_RESULTS.with_stem(f"flags_noise_{name}")
            key = (
                "demo"
                if part == "demo"
                else "noise" + subset + ("" if seed == REPORT_SEED else f" seed {seed}")
            )
        report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
        before = os.getloadavg()[0]
        if part == "demo":
            figures: dict[str, Any] = {"models": demo(name)}
        else:
            found = noise(args.draws, name, args.datasets, seed, agreed=part == "agreed")
            figures = {
                "embedder": name,
                "seed": seed,
                "summary": summary(found["rows"]),
                "rows": found["rows"],
            }
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
