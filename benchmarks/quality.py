"""Quality benchmark: ROC-AUC of `balanced_cosine` vs logistic regression on the same MiniLM embeddings.

    python -m benchmarks.quality [--splits 20] [--sizes 8 16 64 256] [--datasets politeness ...]
        [--embedder minilm]

Datasets are read from ../shared/datasets (or $SCORING_DATASETS); no text is copied into the
repository. Each dataset is embedded once and cached under benchmarks/.cache/ (git-ignored).
For every size n (labelled samples per pole) and split, n texts per pole are drawn from the
dataset's labelled pool; both methods are trained on them and scored on a fixed held-out test
pool. balanced_cosine goes through the real `train` (effort medium) and `Scorer`; the baseline is
scikit-learn's LogisticRegression (default C, class_weight="balanced"). Prints a markdown table
and writes benchmarks/results/quality.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from core.contract import MAX_TEXT_CHARS
from core.engine import Sample, Scorer, TraitSpec, train
from core.engine.embedder_choice import median_words
from core.engine.text_utils import stable_seed
from core.engine.training import PRIOR_STRENGTH
from harness.datasets import datasets_dir
from harness.embedder_comparison import comparison_subset

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"
RESULTS = ROOT / "results"
SIZES = (0, 2, 4, 8, 16, 64, 256)
SPLITS = 20
EFFORT = "medium"


#: The trait definitions an analyst would type for each dataset (written from its NOTES.md, not from
#: its texts): the pole labels, and a description with one sentence per pole that names the pole, the
#: form the engine reads as that pole's own definition (docs/engine.md, "Pole texts").
TRAITS = {
    "politeness": TraitSpec(
        "politeness",
        "Politeness",
        "polite",
        "impolite",
        description="Polite requests thank the reader, greet them and ask gently, with please and could you. "
        "Impolite requests demand, blame, complain or insult the reader.",
    ),
    "subjectivity": TraitSpec(
        "subjectivity",
        "Subjectivity",
        "subjective",
        "objective",
        description="Subjective sentences express the writer's opinion, judgement, emotion or speculation. "
        "Objective sentences neutrally report facts, events, quotes and numbers.",
    ),
    "abuse": TraitSpec(
        "civility",
        "Civility",
        "civil",
        "abusive",
        description="Civil messages are ordinary, friendly or neutral chat with the bot. "
        "Abusive messages insult, harass, swear, use slurs or make sexual remarks.",
    ),
}


@dataclass
class Dataset:
    name: str
    trait: TraitSpec
    pool_texts: list[str]  # labelled pool the training samples are drawn from
    pool_y: np.ndarray  # 1 = positive pole
    test_texts: list[str]  # fixed held-out test pool
    test_y: np.ndarray


def capped(ds: Dataset, pool_per_pole: int | None, test: int | None) -> Dataset:
    """`ds` with at most `pool_per_pole` labelled texts a pole and `test` test texts, drawn with a fixed seed
    (fewer texts to embed: a 768-dimensional embedder embeds ~3x slower than e5-small); None keeps all."""
    rng = np.random.default_rng(stable_seed("quality cap", ds.name))
    pool = np.arange(len(ds.pool_texts))
    if pool_per_pole is not None:
        pool = np.sort(
            np.concatenate(
                [
                    rng.permutation(side)[:pool_per_pole]
                    for side in (np.flatnonzero(ds.pool_y == 1), np.flatnonzero(ds.pool_y == 0))
                ]
            )
        )
    held = np.arange(len(ds.test_texts))
    if test is not None and test < len(held):
        held = np.sort(rng.permutation(held)[:test])
    return Dataset(
        name=ds.name,
        trait=ds.trait,
        pool_texts=[ds.pool_texts[i] for i in pool],
        pool_y=ds.pool_y[pool],
        test_texts=[ds.test_texts[i] for i in held],
        test_y=ds.test_y[held],
    )


def _usable(text: object) -> bool:
    return isinstance(text, str) and 0 < len(text.strip()) <= MAX_TEXT_CHARS and len(text.split()) <= 200


def _finish(name: str, trait: TraitSpec, pool: pd.DataFrame, test: pd.DataFrame) -> Dataset:
    pool = pool[pool.text.map(_usable)].drop_duplicates("text")
    test = test[test.text.map(_usable)].drop_duplicates("text")
    pool_set = set(pool.text.str.strip())
    test = test[~test.text.str.strip().isin(pool_set)]  # no text in both: no leakage
    return Dataset(
        name=name,
        trait=trait,
        pool_texts=pool.text.str.strip().tolist(),
        pool_y=pool.y.to_numpy(dtype=int),
        test_texts=test.text.str.strip().tolist(),
        test_y=test.y.to_numpy(dtype=int),
    )


def load_politeness(base: Path) -> Dataset:
    """Top quartile of the normalised score = polite, bottom quartile = impolite (ConvoKit's rule),
    per community file; 30% of the labelled rows (fixed seed) form the test pool."""
    frames = []
    for file in ("wikipedia.annotated.csv", "stack-exchange.annotated.csv"):
        df = pd.read_csv(base / "stanford_politeness" / file)
        low, high = df["Normalized Score"].quantile([0.25, 0.75])
        df = df[(df["Normalized Score"] <= low) | (df["Normalized Score"] >= high)]
        polite = (df["Normalized Score"] >= high).astype(int)
        frames.append(pd.DataFrame({"text": df["Request"], "y": polite}))
    rows = pd.concat(frames, ignore_index=True)
    rng = np.random.default_rng(0)
    is_test = rng.random(len(rows)) < 0.3
    trait = TRAITS["politeness"]
    return _finish("politeness", trait, rows[~is_test], rows[is_test])


def load_subjectivity(base: Path) -> Dataset:
    """SUBJ = positive pole; train + val form the pool, test.csv the test pool."""
    folder = base / "newssd_eng_subjectivity"

    def read(*files: str) -> pd.DataFrame:
        df = pd.concat([pd.read_csv(folder / f) for f in files], ignore_index=True)
        return pd.DataFrame({"text": df["Sentence"], "y": (df["Label"] == "SUBJ").astype(int)})

    trait = TRAITS["subjectivity"]
    return _finish("subjectivity", trait, read("train.csv", "val.csv"), read("test.csv"))


def abuse_votes(df: pd.DataFrame) -> list[list[int]]:
    """Each row's annotator levels (1 .. -3), one per annotator who labelled it; a cell like "1, 1" is a
    repeat annotation by the same annotator: take the first."""
    votes = []
    for _, row in df.iterrows():
        found = []
        for a in range(1, 9):
            for level in (1, 0, -1, -2, -3):
                cell = row.get(f"Annotator{a}_is_abuse.{level}")
                if isinstance(cell, str) and cell.split(",")[0].strip() == "1":
                    found.append(level)
                    break
        votes.append(found)
    return votes


def _abuse_levels(df: pd.DataFrame) -> pd.Series:
    """Mean annotator level (1 .. -3), NaN for a row nobody labelled."""
    return pd.Series([np.mean(v) if v else np.nan for v in abuse_votes(df)], index=df.index)


def load_abuse(base: Path) -> Dataset:
    """Civil (mean level >= 0) = positive pole, abusive (mean < 0) = negative; train + valid = pool."""
    folder = base / "convabuse"

    def read(*files: str) -> pd.DataFrame:
        df = pd.concat([pd.read_csv(folder / f, dtype=str) for f in files], ignore_index=True)
        level = _abuse_levels(df)
        keep = level.notna()
        return pd.DataFrame({"text": df["user"][keep], "y": (level[keep] >= 0).astype(int)})

    trait = TRAITS["abuse"]
    return _finish(
        "abuse",
        trait,
        read("ConvAbuseEMNLPtrain.csv", "ConvAbuseEMNLPvalid.csv"),
        read("ConvAbuseEMNLPtest.csv"),
    )


def load_vader(name: str) -> Dataset:
    """VADER's rated snippets of one domain ("movies" or "amazon"; benchmarks.quality_vader), from the sdist
    fetched into the cache."""
    from benchmarks import quality_vader

    pool, test = quality_vader.split(quality_vader.ground_truth(CACHE / "vader", name), name)
    return _finish(name, quality_vader.TRAITS[name], pool, test)


def load_movies(base: Path) -> Dataset:
    """VADER's movie-review snippets (long English texts; not from `base`)."""
    return load_vader("movies")


def load_amazon(base: Path) -> Dataset:
    """VADER's Amazon-review snippets (long English texts; not from `base`)."""
    return load_vader("amazon")


LOADERS = {
    "politeness": load_politeness,
    "subjectivity": load_subjectivity,
    "abuse": load_abuse,
    "movies": load_movies,
    "amazon": load_amazon,
}
#: What a run reads unless --datasets says otherwise: the three shared datasets (the tables above were taken
#: on them); `--datasets all` adds VADER's two review domains.
DEFAULT_DATASETS = ("politeness", "subjectivity", "abuse")


class LookupEmbedder:
    """Serves the cached vectors of one dataset under the real embedder's id; other texts (the traits'
    pole texts) are embedded by the real embedder once and remembered."""

    def __init__(self, embedder: Any, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.id = embedder.id
        self.dim = vectors.shape[1]
        self._embedder = embedder
        self._row = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors
        self._extra: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._row and t not in self._extra]
        if missing:
            self._extra.update(zip(missing, self._embedder.encode(missing), strict=True))
        return np.stack([self._vectors[self._row[t]] if t in self._row else self._extra[t] for t in texts])


def embed_cached(ds: Dataset, embedder_name: str = "minilm") -> LookupEmbedder:
    from core.embedders import get_embedder

    embedder = get_embedder(embedder_name)
    texts = sorted(set(ds.pool_texts) | set(ds.test_texts))
    digest = hashlib.sha256("\x1e".join(texts).encode("utf-8")).hexdigest()[:16]
    path = CACHE / f"{ds.name}-{embedder.id}-{digest}.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        CACHE.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        vectors = embedder.encode(texts)
        print(f"embedded {len(texts)} {ds.name} texts in {time.perf_counter() - start:.0f} s", flush=True)
        np.save(path, vectors)
    return LookupEmbedder(embedder, texts, vectors)


def _auc(
    ds: Dataset, lookup: LookupEmbedder, samples: list[Sample], prior_strength: float
) -> tuple[float, float, float]:
    """(test ROC-AUC, the out-of-fold ROC-AUC training reported and its standard error: NaN without folds)."""
    result = train([ds.trait], samples, embedder=lookup, effort=EFFORT, prior_strength=prior_strength)
    scores = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(ds.test_texts)[:, 0]
    oof, se = (result.metrics[ds.trait.key].get(k) for k in ("roc_auc", "roc_auc_se"))
    nan = float("nan")
    return (
        float(roc_auc_score(ds.test_y, scores)),
        nan if oof is None else float(oof),
        nan if se is None else float(se),
    )


def run_split(
    ds: Dataset, lookup: LookupEmbedder, n: int, split: int, plain: bool = True
) -> tuple[float, ...]:
    """(balanced_cosine with the pole-text prior, without it, logistic regression) test AUCs, the prior
    model's out-of-fold AUC from training (what a choice between embedders sees), that figure on the subset
    `auto` compares embedders on when it is smaller than the samples, the samples' median word count, and the
    out-of-fold AUC's standard error; at n = 0 only the zero-shot AUC (the others are NaN)."""
    if n == 0:
        return _auc(ds, lookup, [], PRIOR_STRENGTH)[0], *[float("nan")] * 6
    rng = np.random.default_rng(stable_seed("quality", ds.name, n, split))
    chosen = np.concatenate(
        [rng.choice(np.flatnonzero(ds.pool_y == pole), size=n, replace=False) for pole in (1, 0)]
    )
    texts = [ds.pool_texts[i] for i in chosen]
    y = ds.pool_y[chosen]
    samples = [Sample(ds.trait.key, t, float(label)) for t, label in zip(texts, y, strict=True)]
    prior_auc, prior_oof, prior_se = _auc(ds, lookup, samples, PRIOR_STRENGTH)
    plain_auc = _auc(ds, lookup, samples, 0.0)[0] if plain else float("nan")

    lr = LogisticRegression(class_weight="balanced", max_iter=1000)
    lr.fit(lookup.encode(texts), y)
    lr_auc = roc_auc_score(ds.test_y, lr.decision_function(lookup.encode(ds.test_texts)))
    # What `auto` compares embedders on when there are more labels than it compares on: the same labelled
    # subset harness.embedder_comparison draws, trained on alone (NaN when the comparison takes every sample).
    subset = comparison_subset(samples)
    sample_oof = float("nan") if len(subset) == len(samples) else _auc(ds, lookup, subset, PRIOR_STRENGTH)[1]
    return prior_auc, plain_auc, float(lr_auc), prior_oof, sample_oof, median_words(texts), prior_se


def _stats(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| dataset | per pole | bc + prior (new) | balanced_cosine | logistic regression "
        "| new − LR ± s.e. | new − bc ± s.e. | new wins vs LR |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        head = f"| {r['dataset']} | {r['per_pole']} | {r['prior_mean']:.3f} ± {r['prior_std']:.3f} "
        if r["per_pole"] == 0:
            lines.append(head + "| – | – | – | – | – |")
            continue
        lines.append(
            head + f"| {r['balanced_cosine_mean']:.3f} ± {r['balanced_cosine_std']:.3f} "
            f"| {r['logreg_mean']:.3f} ± {r['logreg_std']:.3f} | {r['diff_mean']:+.4f} ± {r['diff_se']:.4f} "
            f"| {r['diff_plain_mean']:+.4f} ± {r['diff_plain_se']:.4f} | {r['wins']}/{r['splits']} |"
        )
    lines += ["", "| per pole | mean AUC, new | mean AUC, LR | new − LR |", "|---:|---:|---:|---:|"]
    for m in means(rows):
        lr = "–" if m["logreg"] is None else f"{m['logreg']:.3f}"
        diff = "–" if m["logreg"] is None else f"{m['prior'] - m['logreg']:+.4f}"
        lines.append(f"| {m['per_pole']} | {m['prior']:.3f} | {lr} | {diff} |")
    return "\n".join(lines)


def means(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean over the datasets per size (the issue's bars are on these)."""
    out = []
    for n in sorted({r["per_pole"] for r in rows}):
        cell = [r for r in rows if r["per_pole"] == n]
        lr = [r["logreg_mean"] for r in cell if "logreg_mean" in r]
        out.append(
            {
                "per_pole": n,
                "datasets": len(cell),
                "prior": float(np.mean([r["prior_mean"] for r in cell])),
                "logreg": float(np.mean(lr)) if lr else None,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS), choices=[*LOADERS, "all"])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--splits", type=int, default=SPLITS)
    parser.add_argument("--output", type=Path, default=RESULTS / "quality.json")
    parser.add_argument("--embedder", default="minilm", help="a name or id get_embedder accepts")
    parser.add_argument(
        "--pool-per-pole", type=int, help="at most this many labelled texts a pole (fixed seed)"
    )
    parser.add_argument("--test", type=int, help="at most this many test texts (fixed seed)")
    parser.add_argument(
        "--no-plain", action="store_true", help="skip the arm without the prior (a comparison of embedders)"
    )
    args = parser.parse_args(argv)

    base = datasets_dir()
    rows = []
    for name in list(LOADERS) if "all" in args.datasets else args.datasets:
        ds = capped(LOADERS[name](base), args.pool_per_pole, args.test)
        lookup = embed_cached(ds, args.embedder)
        print(
            f"{name}: pool {int(ds.pool_y.sum())} positive / {int((1 - ds.pool_y).sum())} negative, "
            f"test pool {len(ds.test_y)} ({int(ds.test_y.sum())} positive)",
            flush=True,
        )
        for n in args.sizes:
            start = time.perf_counter()
            splits = 1 if n == 0 else args.splits  # zero-shot draws nothing: one run is every run
            triples = np.array([run_split(ds, lookup, n, s, not args.no_plain) for s in range(splits)])
            prior, plain, lr = triples[:, 0], triples[:, 1], triples[:, 2]
            row: dict[str, Any] = {"dataset": name, "per_pole": n, "splits": splits}
            # Each draw's figures, for benchmarks.embedder_choice (the same draws for every embedder).
            row["per_split"] = {
                "prior": prior.tolist(),
                "logreg": lr.tolist(),
                "oof": [None if np.isnan(v) else v for v in triples[:, 3].tolist()],
                "oof_compared": [None if np.isnan(v) else v for v in triples[:, 4].tolist()],
                "median_words": [None if np.isnan(v) else v for v in triples[:, 5].tolist()],
                "oof_se": [None if np.isnan(v) else v for v in triples[:, 6].tolist()],
            }
            row["prior_mean"], row["prior_std"] = _stats(prior)
            if n > 0:
                row["balanced_cosine_mean"], row["balanced_cosine_std"] = _stats(plain)
                row["logreg_mean"], row["logreg_std"] = _stats(lr)
                # Paired differences and their standard errors: how much of each mean is noise.
                for key, other in (("diff", lr), ("diff_plain", plain)):
                    d = prior - other
                    row[f"{key}_mean"] = float(d.mean())
                    row[f"{key}_se"] = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0
                row["wins"] = int((prior > lr).sum())
            row["seconds"] = round(time.perf_counter() - start, 1)
            rows.append(row)
            print(
                f"  n={n}: prior {prior.mean():.4f} plain {plain.mean():.4f} lr {lr.mean():.4f}", flush=True
            )

    table = markdown(rows)
    print()
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "effort": EFFORT,
                "embedder": args.embedder,
                "metric": "roc_auc, mean ± std",
                "prior_strength": PRIOR_STRENGTH,
                "rows": rows,
                "means": means(rows),
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
