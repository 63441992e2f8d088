"""A blend of both embedders against `auto`, on the quality benchmark's draws of the embedder-choice figures.

    python -m benchmarks.embedder_blend [--table-only]

The blend trains one model on each embedder as training does today (effort medium, the pole-text prior) and
scores a text by the mean of the two models' scores, so it costs the scoring CPU of both embedders. The gated
blend is what a product could offer at a bounded cost: the blend only where `auto` would compare the embedders
(a median of `MIN_WORDS` words and `MIN_POLE` samples a pole), else e5 alone. Each draw is the one
`benchmarks.quality` makes for (dataset, size, split), on the datasets capped as
`benchmarks.embedder_choice`'s runs were (300 labelled texts a pole, 400 test texts), from the embeddings
those runs cached; the runs stored each embedder's test ROC-AUC, not its scores, so both models are trained
again per draw, and each embedder's figure is checked against the stored one (`max_embedder_difference`).
Prints a markdown table (each embedder, `auto`, the best embedder per draw, the blend, the gated blend; mean
test ROC-AUC and the differences with e5 alone) and the targets' checks per arm; writes
benchmarks/results/embedder_blend.json.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from benchmarks import embedder_choice
from benchmarks.quality import EFFORT, LOADERS, Dataset, LookupEmbedder, capped, embed_cached
from core.engine import Sample, Scorer, train
from core.engine.embedder_choice import TIE
from core.engine.text_utils import stable_seed
from core.engine.training import PRIOR_STRENGTH
from harness.datasets import datasets_dir
from harness.embedder_comparison import MIN_POLE, MIN_WORDS

RESULTS = Path(__file__).resolve().parent / "results"
OUTPUT = RESULTS / "embedder_blend.json"
#: The embedders as `benchmarks.quality` was run on them (cheapest first), under embedder_choice's names.
EMBEDDERS = {"e5-small": "e5-small-qint8", "mpnet-base": "mpnet-base"}
SIZES = (8, 32, 256)
SPLITS = 5
POOL_PER_POLE = 300
TEST = 400
ARMS = ("auto", "blend", "gated blend")


def draw(ds: Dataset, n: int, split: int) -> list[Sample]:
    """The samples `benchmarks.quality.run_split` trains on for (dataset, n, split)."""
    rng = np.random.default_rng(stable_seed("quality", ds.name, n, split))
    chosen = np.concatenate(
        [rng.choice(np.flatnonzero(ds.pool_y == pole), size=n, replace=False) for pole in (1, 0)]
    )
    return [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i])) for i in chosen]


def test_scores(ds: Dataset, lookup: LookupEmbedder, samples: list[Sample]) -> np.ndarray:
    """The test texts' scores of a model trained on `samples` as the quality benchmark trains one."""
    result = train([ds.trait], samples, embedder=lookup, effort=EFFORT, prior_strength=PRIOR_STRENGTH)
    scores: np.ndarray = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(ds.test_texts)[:, 0]
    return scores


def blend_auc(y: np.ndarray, scores: Sequence[np.ndarray]) -> float:
    """Test ROC-AUC of the mean of the embedders' scores."""
    return float(roc_auc_score(y, np.mean(np.stack(scores), axis=0)))


def measure(
    datasets: Sequence[str], sizes: Sequence[int], splits: int, pool_per_pole: int | None, test: int | None
) -> list[dict[str, Any]]:
    """Per (dataset, size): each draw's test ROC-AUC on each embedder and of their blend."""
    rows = []
    for name in datasets:
        ds = capped(LOADERS[name](datasets_dir()), pool_per_pole, test)
        lookups = {name: embed_cached(ds, embedder) for name, embedder in EMBEDDERS.items()}
        for n in sizes:
            start = time.process_time()
            split: dict[str, list[float]] = {embedder: [] for embedder in (*EMBEDDERS, "blend")}
            for s in range(splits):
                samples = draw(ds, n, s)
                scores = [test_scores(ds, lookup, samples) for lookup in lookups.values()]
                for embedder, embedder_scores in zip(EMBEDDERS, scores, strict=True):
                    split[embedder].append(float(roc_auc_score(ds.test_y, embedder_scores)))
                split["blend"].append(blend_auc(ds.test_y, scores))
            seconds = round(time.process_time() - start, 1)
            rows.append({"dataset": name, "per_pole": n, "cpu_seconds": seconds, "per_split": split})
            print(f"{name} n={n}: blend {np.mean(split['blend']):.4f} ({seconds} s of CPU)", flush=True)
    return rows


def scoring_cost(texts: int) -> dict[str, float]:
    """CPU seconds per uncached 30-word text of scoring one text at a time: a model on e5 alone, and the blend
    (a model on each embedder, the mean of their scores); trained on movie reviews' first draw at 32 a
    pole."""
    from benchmarks.embedder_choice_cost import thirty_words
    from core.embedders import get_embedder

    ds = capped(LOADERS["movies"](datasets_dir()), POOL_PER_POLE, TEST)
    samples = draw(ds, 32, 0)
    scorers = []
    for name in EMBEDDERS.values():
        embedder = get_embedder(name)
        embedder.encode(["a first text loads the model"])
        lookup = embed_cached(ds, name)
        result = train([ds.trait], samples, embedder=lookup, effort=EFFORT, prior_strength=PRIOR_STRENGTH)
        scorers.append(Scorer.from_snapshot(result.snapshot, embedder=embedder))
    words = thirty_words(ds.test_texts, texts)

    def per_text(used: Sequence[Scorer]) -> float:
        start = time.process_time()
        for text in words:
            float(np.mean([scorer.score([text])[0, 0] for scorer in used]))
        return (time.process_time() - start) / len(words)

    alone, blend = per_text(scorers[:1]), per_text(scorers)
    return {"texts": len(words), "e5_alone_s": alone, "blend_s": blend, "blend_over_e5": blend / alone}


def gated(blend: float, alone: float, words: float | None, per_pole: int) -> float:
    """A draw's gated-blend figure: the blend where `auto` would compare the embedders, else the cheapest
    embedder's alone."""
    compared = per_pole >= MIN_POLE and (words is None or words >= MIN_WORDS)
    return blend if compared else alone


def with_blend(
    table: list[dict[str, Any]], blend_rows: list[dict[str, Any]], files: dict[str, Path]
) -> list[dict[str, Any]]:
    """`embedder_choice.cells`' table with the blend's arms, where a cell has them: the blend's mean over the
    stored draws, and the gated blend's (each draw's median word count from the cheapest embedder's run)."""
    first = next(iter(files))
    run = json.loads(files[first].read_text())
    words = {(r["dataset"], r["per_pole"]): r["per_split"].get("median_words") for r in run["rows"]}
    stored = {(r["dataset"], r["per_pole"]): r["per_split"] for r in run["rows"]}
    blends = {(r["dataset"], r["per_pole"]): r["per_split"]["blend"] for r in blend_rows}
    out = []
    for cell in table:
        key = (cell["dataset"], cell["per_pole"])
        if key not in blends:
            continue
        k = cell["splits"]
        blend = blends[key][:k]
        draw_words = words.get(key) or [None] * k
        alone = stored[key]["prior"][:k]
        gate = [gated(b, a, w, cell["per_pole"]) for b, a, w in zip(blend, alone, draw_words, strict=True)]
        out.append({**cell, "blend": float(np.mean(blend)), "gated blend": float(np.mean(gate))})
    return out


def spread(blend_rows: list[dict[str, Any]], files: dict[str, Path]) -> list[dict[str, Any]]:
    """Per size and arm, the arm − the first embedder over the datasets' mean, draw by draw: its mean and
    standard error over the draws (the draws of one split index share nothing across datasets but the
    index)."""
    runs = {embedder: json.loads(path.read_text()) for embedder, path in files.items()}
    keyed = {
        embedder: {(r["dataset"], r["per_pole"]): r["per_split"] for r in run["rows"]}
        for embedder, run in runs.items()
    }
    first = next(iter(files))
    out = []
    for n in sorted({r["per_pole"] for r in blend_rows}):
        gains: dict[str, list[list[float]]] = {arm: [] for arm in ARMS}
        for r in (r for r in blend_rows if r["per_pole"] == n):
            rows = {embedder: keyed[embedder][(r["dataset"], n)] for embedder in files}
            blend, alone = r["per_split"]["blend"], rows[first]["prior"]
            words = rows[first].get("median_words") or [None] * len(blend)
            arms = {
                "auto": [rows[embedder_choice.pick(rows, s, n, TIE)]["prior"][s] for s in range(len(blend))],
                "blend": blend,
                "gated blend": [gated(b, a, w, n) for b, a, w in zip(blend, alone, words, strict=True)],
            }
            for arm, figures in arms.items():
                gains[arm].append([f - a for f, a in zip(figures, alone, strict=True)])
        for arm, per_dataset in gains.items():
            per_draw = np.mean(np.array(per_dataset), axis=0)
            se = float(per_draw.std(ddof=1) / np.sqrt(len(per_draw))) if len(per_draw) > 1 else 0.0
            out.append({"per_pole": n, "arm": arm, "mean_vs_first": float(per_draw.mean()), "se": se})
    return out


def spread_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| per pole | " + " | ".join(f"{arm} − e5 ± s.e." for arm in ARMS) + " |",
        "|---:|" + "---:|" * len(ARMS),
    ]
    for n in sorted({r["per_pole"] for r in rows}):
        cell = {r["arm"]: r for r in rows if r["per_pole"] == n}
        figures = " | ".join(f"{signed(cell[a]['mean_vs_first'])} ± {cell[a]['se']:.3f}" for a in ARMS)
        lines.append(f"| {n} | {figures} |")
    return "\n".join(lines)


def max_embedder_difference(blend_rows: list[dict[str, Any]], files: dict[str, Path]) -> float:
    """The largest |re-run − stored| test ROC-AUC of one embedder on one draw: 0 when the draws are the
    same."""
    worst = 0.0
    for embedder, path in files.items():
        stored = {
            (r["dataset"], r["per_pole"]): r["per_split"]["prior"]
            for r in json.loads(path.read_text())["rows"]
        }
        for r in blend_rows:
            again = r["per_split"][embedder]
            before = stored[(r["dataset"], r["per_pole"])][: len(again)]
            worst = max(worst, *(abs(a - b) for a, b in zip(again, before, strict=True)))
    return worst


def signed(x: float) -> str:
    """`x` to three places with its sign, a difference that rounds to nothing as +0.000."""
    return f"{round(x, 3) + 0.0:+.3f}"


def markdown(table: list[dict[str, Any]], embedders: Sequence[str]) -> str:
    base = embedders[0]
    keys = [*embedders, "auto", "best per draw", "blend", "gated blend"]
    head = " | ".join(
        [*embedders, "auto", "best embedder per draw", "blend", "gated blend", *(f"{a} − e5" for a in ARMS)]
    )
    lines = [f"| dataset | per pole | {head} |", "|---|---:|" + "---:|" * (len(keys) + len(ARMS))]
    for c in table:
        figures = " | ".join(f"{c[k]:.3f}" for k in keys)
        deltas = " | ".join(signed(c[a] - c[base]) for a in ARMS)
        lines.append(f"| {c['dataset']} | {c['per_pole']} | {figures} | {deltas} |")
    for n in sorted({c["per_pole"] for c in table}):
        cell = [c for c in table if c["per_pole"] == n]
        means = " | ".join(f"{np.mean([c[k] for c in cell]):.3f}" for k in keys)
        deltas = " | ".join(signed(float(np.mean([c[a] - c[base] for c in cell]))) for a in ARMS)
        lines.append(f"| **mean** | {n} | {means} | {deltas} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--splits", type=int, default=SPLITS)
    parser.add_argument(
        "--score-texts",
        type=int,
        default=100,
        help="30-word texts the scoring cost is timed on (0: not timed)",
    )
    parser.add_argument(
        "--table-only", action="store_true", help="read the draws' figures from --output instead of training"
    )
    args = parser.parse_args(argv)
    if args.table_only:
        document = json.loads(args.output.read_text())
        rows = document["rows"]
    else:
        start = time.process_time()
        rows = measure(args.datasets, args.sizes, args.splits, POOL_PER_POLE, TEST)
        document = {"effort": EFFORT, "cpu_seconds": round(time.process_time() - start, 1), "rows": rows}
        if args.score_texts:
            document["scoring_cost"] = scoring_cost(args.score_texts)
    embedders = list(embedder_choice.EMBEDDERS)
    table = with_blend(embedder_choice.cells(embedder_choice.EMBEDDERS), rows, embedder_choice.EMBEDDERS)
    document["max_body_difference"] = max_embedder_difference(rows, embedder_choice.EMBEDDERS)
    document["cells"] = table
    document["checks"] = {arm: embedder_choice.checks(table, embedders, arm) for arm in ARMS}
    document["mean_over_datasets"] = spread(rows, embedder_choice.EMBEDDERS)
    print(markdown(table, embedders))
    print()
    print(spread_markdown(document["mean_over_datasets"]))
    print()
    shown = ("max_body_difference", "checks", "scoring_cost")
    print(json.dumps({k: document[k] for k in shown if k in document}, indent=2))
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
