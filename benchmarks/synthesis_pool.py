"""Synthesis from a pool: do `from_traits` exemplars carry their pole, do they train a better model than the
zero-shot one, and does `diversify` keep the seed's pole while changing its words?

    python -m benchmarks.synthesis_pool [--pool 500] [--repeats 3] [--seeds 8] [--effort medium]
        [--embedder default] [--datasets politeness subjectivity abuse]

For each shared dataset (read in place, as benchmarks/quality.py reads them; vectors cached as it caches
them), each repeat draws `--pool` texts (seed = the repeat's number) from its labelled pool and passes them
to `synthesize` as the model's unlabelled pool (their labels hidden), with the dataset's trait as an analyst
would type it (benchmarks.quality.TRAITS):

- `from_traits`, no samples (the zero-shot case): the share of exemplars whose human label agrees with the
  pole they were given (target >= 80 %), over every repeat's exemplars (16 a repeat at effort medium: 3
  repeats judge the target on 48, so one text moves it by 2 points, not 12.5); and the ROC-AUC on
  `TEST_TEXTS` of the dataset's held-out test texts of a model trained (`train`, effort medium) on one
  repeat's exemplars alone, against the zero-shot model's (the trait without samples).
- `diversify`, with `--seeds` real texts a pole (drawn from the labelled pool outside the repeat's pool) as
  the model's samples: the share of variants a reference model trained on the real labels of
  `REFERENCE_TEXTS` other pool texts puts on the seed's pole (target >= 90 %), the share whose human label
  is the seed's, and the share that differ from their seed in more than `FEW_WORDS` words (a word-level
  diff: words added plus words removed; a variant's seed is taken to be the nearest seed of its pole).

Prints markdown tables and writes benchmarks/results/synthesis_pool.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from benchmarks.quality import CACHE, LOADERS, Dataset, LookupEmbedder
from core.contract import nearer_pole_is_positive
from core.embedders import get_embedder
from core.engine import Sample, Scorer, synthesize, train
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results"
#: Held-out test texts scored, and labelled texts the diversify reference model trains on (each a seeded
#: draw): enough for a stable ROC-AUC, few enough to embed on a busy 2-core machine.
TEST_TEXTS = 400
REFERENCE_TEXTS = 300
#: A variant that changes more words than this is a new text, not the seed with a filler.
FEW_WORDS = 3
_WORD = re.compile(r"\w+")


def words_changed(a: str, b: str) -> int:
    """Words removed from `a` plus words added in `b` (case-folded, punctuation ignored): the insert/delete
    edit distance over words, from their longest common subsequence (difflib's matching blocks are not the
    longest, and not symmetric)."""
    x, y = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    row = [0] * (len(y) + 1)
    for word in x:
        diagonal = 0
        for j, other in enumerate(y, start=1):
            diagonal, row[j] = row[j], diagonal + 1 if word == other else max(row[j], row[j - 1])
    return len(x) + len(y) - 2 * row[-1]


def test_auc(ds: Dataset, lookup: LookupEmbedder, samples: list[Sample]) -> float:
    """ROC-AUC on the held-out test texts of the trait trained on `samples` (none: zero-shot)."""
    result = train([ds.trait], samples, embedder=lookup, effort="medium")
    scores = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(ds.test_texts)[:, 0]
    return float(roc_auc_score(ds.test_y, scores))


def _share(values: list[bool]) -> float | None:
    return round(float(np.mean(values)), 3) if values else None


def embedded(texts: list[str], embedder_name: str) -> LookupEmbedder:
    """`texts` embedded once (cached in benchmarks/.cache, as benchmarks/quality.py caches a dataset)."""
    embedder = get_embedder(embedder_name)
    texts = sorted(set(texts))
    digest = hashlib.sha256("\x1e".join(texts).encode("utf-8")).hexdigest()[:16]
    path = CACHE / f"synthesis-{embedder.id}-{digest}.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        CACHE.mkdir(parents=True, exist_ok=True)
        vectors = embedder.encode(texts)
        np.save(path, vectors)
    return LookupEmbedder(embedder, texts, vectors)


def _draws(ds: Dataset, pool_size: int, repeats: int, n_seeds: int) -> list[tuple[np.ndarray, ...]]:
    """Per repeat: the pool's, the diversify seeds' and the reference model's indices into the pool."""
    out: list[tuple[np.ndarray, ...]] = []
    for repeat in range(repeats):
        rng = np.random.default_rng(repeat)
        chosen = rng.choice(len(ds.pool_texts), size=min(pool_size, len(ds.pool_texts)), replace=False)
        rest = np.setdiff1d(np.arange(len(ds.pool_texts)), chosen)
        seeds = np.concatenate(
            [rng.choice(rest[ds.pool_y[rest] == pole], size=n_seeds, replace=False) for pole in (1, 0)]
        )
        others = np.setdiff1d(rest, seeds)
        reference = rng.choice(others, size=min(REFERENCE_TEXTS, len(others)), replace=False)
        out.append((chosen, seeds, reference))
    return out


def run(name: str, pool_size: int, repeats: int, n_seeds: int, effort: str, embedder: str) -> dict[str, Any]:
    ds = LOADERS[name](datasets_dir())
    test = np.random.default_rng(0).permutation(len(ds.test_texts))[:TEST_TEXTS]
    ds = replace(ds, test_texts=[ds.test_texts[i] for i in test], test_y=ds.test_y[test])
    draws = _draws(ds, pool_size, repeats, n_seeds)
    needed = list(ds.test_texts) + [ds.pool_texts[i] for d in draws for part in d for i in part]
    lookup = embedded(needed, embedder)
    start = time.perf_counter()
    zero_shot = test_auc(ds, lookup, [])
    agree: dict[int, list[bool]] = {1: [], 0: []}
    exemplar_aucs: list[float] = []
    on_pole: list[bool] = []
    human_kept: list[bool] = []
    differ: list[bool] = []
    for chosen, seed_idx, reference_idx in draws:
        pool = [ds.pool_texts[i] for i in chosen]
        label = {ds.pool_texts[i]: int(ds.pool_y[i]) for i in chosen}

        out = synthesize([ds.trait], [], effort=effort, embedder=lookup, pool=pool)
        for s in out:
            given = 1 if s.quality == 1.0 else 0
            agree[given].append(label[s.text] == given)
        exemplar_aucs.append(test_auc(ds, lookup, out))

        seeds = [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i])) for i in seed_idx]
        reference = [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i])) for i in reference_idx]
        scorer = Scorer.from_snapshot(train([ds.trait], reference, embedder=lookup).snapshot, embedder=lookup)
        variants = synthesize(
            [ds.trait], seeds, synth_type="diversify", effort=effort, embedder=lookup, pool=pool
        )
        # A pool variant is a text near its seed: its seed is taken to be the nearest seed of its pole.
        seed_x = lookup.encode([s.text for s in seeds])
        if variants:
            scores = scorer.score([v.text for v in variants])[:, 0]
            vx = lookup.encode([v.text for v in variants])
            for v, score, x in zip(variants, scores, vx, strict=True):
                same_pole = [i for i, s in enumerate(seeds) if s.quality == v.quality]
                seed = seeds[max(same_pole, key=lambda i: float(seed_x[i] @ x))]
                positive = v.quality == 1.0
                on_pole.append(nearer_pole_is_positive(float(score)) == positive)
                human_kept.append(label[v.text] == int(positive))
                differ.append(words_changed(seed.text, v.text) > FEW_WORDS)
    every = agree[1] + agree[0]
    return {
        "dataset": name,
        "pool": pool_size,
        "repeats": repeats,
        "exemplars": len(every),
        "agree": _share(every),
        "agree_positive": _share(agree[1]),
        "agree_negative": _share(agree[0]),
        "zero_shot_auc": round(zero_shot, 3),
        "exemplar_auc_mean": round(float(np.mean(exemplar_aucs)), 3),
        "exemplar_auc_min": round(float(np.min(exemplar_aucs)), 3),
        "exemplar_auc_max": round(float(np.max(exemplar_aucs)), 3),
        "variants": len(on_pole),
        "variants_on_seed_pole": _share(on_pole),
        "variants_human_label_kept": _share(human_kept),
        "variants_differ": _share(differ),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=8, help="diversify's seed texts a pole")
    parser.add_argument("--effort", default="medium")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--output", type=Path, default=RESULTS / "synthesis_pool.json")
    args = parser.parse_args()
    rows = [run(n, args.pool, args.repeats, args.seeds, args.effort, args.embedder) for n in args.datasets]
    print("| dataset | exemplars | agree | positive pole | negative pole | ROC-AUC zero-shot | exemplars |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['exemplars']} | {r['agree']} | {r['agree_positive']} | "
            f"{r['agree_negative']} | {r['zero_shot_auc']} | {r['exemplar_auc_mean']} "
            f"({r['exemplar_auc_min']}–{r['exemplar_auc_max']}) |"
        )
    print()
    print(f"| dataset | variants | on the seed's pole (reference) | human label kept | > {FEW_WORDS} words |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['variants']} | {r['variants_on_seed_pole']} | "
            f"{r['variants_human_label_kept']} | {r['variants_differ']} |"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    doc = {"effort": args.effort, "embedder": args.embedder, "seeds_per_pole": args.seeds, "rows": rows}
    args.output.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
