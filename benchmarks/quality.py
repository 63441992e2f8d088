"""Quality benchmark: ROC-AUC of `balanced_cosine` vs logistic regression on the same MiniLM embeddings.

    python -m benchmarks.quality [--splits 20] [--sizes 8 16 64 256] [--datasets politeness ...]

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
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from core.engine import Sample, Scorer, TraitSpec, train
from core.engine.text_utils import stable_seed
from core.engine.validation import MAX_TEXT_CHARS

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"
RESULTS = ROOT / "results"
SIZES = (8, 16, 64, 256)
SPLITS = 20
EFFORT = "medium"


def datasets_dir() -> Path:
    env = os.environ.get("SCORING_DATASETS")
    if env:
        return Path(env)
    for base in (ROOT.parent.parent / "shared" / "datasets", Path("/work/shared/datasets")):
        if base.is_dir():
            return base
    raise SystemExit("datasets not found: set SCORING_DATASETS to the shared datasets folder")


@dataclass
class Dataset:
    name: str
    trait: TraitSpec
    pool_texts: list[str]  # labelled pool the training samples are drawn from
    pool_y: np.ndarray  # 1 = positive pole
    test_texts: list[str]  # fixed held-out test pool
    test_y: np.ndarray


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
    trait = TraitSpec("politeness", "Politeness", "polite", "impolite")
    return _finish("politeness", trait, rows[~is_test], rows[is_test])


def load_subjectivity(base: Path) -> Dataset:
    """SUBJ = positive pole; train + val form the pool, test.csv the test pool."""
    folder = base / "newssd_eng_subjectivity"

    def read(*files: str) -> pd.DataFrame:
        df = pd.concat([pd.read_csv(folder / f) for f in files], ignore_index=True)
        return pd.DataFrame({"text": df["Sentence"], "y": (df["Label"] == "SUBJ").astype(int)})

    trait = TraitSpec("subjectivity", "Subjectivity", "subjective", "objective")
    return _finish("subjectivity", trait, read("train.csv", "val.csv"), read("test.csv"))


def _abuse_levels(df: pd.DataFrame) -> pd.Series:
    """Mean annotator level (1 .. -3); a cell like "1, 1" is a repeat annotation: take the first."""
    levels = []
    for _, row in df.iterrows():
        found = []
        for a in range(1, 9):
            for level in (1, 0, -1, -2, -3):
                cell = row.get(f"Annotator{a}_is_abuse.{level}")
                if isinstance(cell, str) and cell.split(",")[0].strip() == "1":
                    found.append(level)
                    break
        levels.append(np.mean(found) if found else np.nan)
    return pd.Series(levels, index=df.index)


def load_abuse(base: Path) -> Dataset:
    """Civil (mean level >= 0) = positive pole, abusive (mean < 0) = negative; train + valid = pool."""
    folder = base / "convabuse"

    def read(*files: str) -> pd.DataFrame:
        df = pd.concat([pd.read_csv(folder / f, dtype=str) for f in files], ignore_index=True)
        level = _abuse_levels(df)
        keep = level.notna()
        return pd.DataFrame({"text": df["user"][keep], "y": (level[keep] >= 0).astype(int)})

    trait = TraitSpec("civility", "Civility", "civil", "abusive")
    return _finish("abuse", trait, read("ConvAbuseEMNLPtrain.csv", "ConvAbuseEMNLPvalid.csv"),
                   read("ConvAbuseEMNLPtest.csv"))


LOADERS = {"politeness": load_politeness, "subjectivity": load_subjectivity, "abuse": load_abuse}


class LookupEmbedder:
    """Serves the cached vectors of one dataset under the real embedder's id."""

    def __init__(self, embedder_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.id = embedder_id
        self.dim = vectors.shape[1]
        self._row = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors[[self._row[t] for t in texts]]


def embed_cached(ds: Dataset) -> LookupEmbedder:
    from core.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
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
    return LookupEmbedder(embedder.id, texts, vectors)


def run_split(ds: Dataset, lookup: LookupEmbedder, n: int, split: int) -> tuple[float, float]:
    rng = np.random.default_rng(stable_seed("quality", ds.name, n, split))
    chosen = np.concatenate(
        [rng.choice(np.flatnonzero(ds.pool_y == pole), size=n, replace=False) for pole in (1, 0)]
    )
    texts = [ds.pool_texts[i] for i in chosen]
    y = ds.pool_y[chosen]
    samples = [Sample(ds.trait.key, t, float(label)) for t, label in zip(texts, y, strict=True)]
    result = train([ds.trait], samples, embedder=lookup, effort=EFFORT)
    scores = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(ds.test_texts)[:, 0]
    bc_auc = roc_auc_score(ds.test_y, scores)

    lr = LogisticRegression(class_weight="balanced", max_iter=1000)
    lr.fit(lookup.encode(texts), y)
    lr_auc = roc_auc_score(ds.test_y, lr.decision_function(lookup.encode(ds.test_texts)))
    return float(bc_auc), float(lr_auc)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--splits", type=int, default=SPLITS)
    parser.add_argument("--output", type=Path, default=RESULTS / "quality.json")
    args = parser.parse_args(argv)

    base = datasets_dir()
    rows = []
    for name in args.datasets:
        ds = LOADERS[name](base)
        lookup = embed_cached(ds)
        print(
            f"{name}: pool {int(ds.pool_y.sum())} positive / {int((1 - ds.pool_y).sum())} negative, "
            f"test pool {len(ds.test_y)} ({int(ds.test_y.sum())} positive)",
            flush=True,
        )
        for n in args.sizes:
            start = time.perf_counter()
            pairs = np.array([run_split(ds, lookup, n, s) for s in range(args.splits)])
            bc, lr = pairs[:, 0], pairs[:, 1]
            rows.append(
                {
                    "dataset": name,
                    "per_pole": n,
                    "splits": args.splits,
                    "balanced_cosine_mean": float(bc.mean()),
                    "balanced_cosine_std": float(bc.std(ddof=1)) if len(bc) > 1 else 0.0,
                    "logreg_mean": float(lr.mean()),
                    "logreg_std": float(lr.std(ddof=1)) if len(lr) > 1 else 0.0,
                    "diff_mean": float((bc - lr).mean()),
                    # Standard error of the paired difference: how much of diff_mean is noise.
                    "diff_se": float((bc - lr).std(ddof=1) / np.sqrt(len(bc))) if len(bc) > 1 else 0.0,
                    "wins": int((bc > lr).sum()),
                    "seconds": round(time.perf_counter() - start, 1),
                }
            )
            print(f"  n={n}: bc {bc.mean():.4f} lr {lr.mean():.4f}", flush=True)

    lines = [
        "| dataset | per pole | balanced_cosine AUC | logistic regression AUC | diff ± s.e. | bc wins |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['per_pole']} "
            f"| {r['balanced_cosine_mean']:.3f} ± {r['balanced_cosine_std']:.3f} "
            f"| {r['logreg_mean']:.3f} ± {r['logreg_std']:.3f} | {r['diff_mean']:+.4f} ± {r['diff_se']:.4f} "
            f"| {r['wins']}/{r['splits']} |"
        )
    table = "\n".join(lines)
    print()
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {"effort": EFFORT, "embedder": "minilm", "metric": "roc_auc, mean ± std", "rows": rows},
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
