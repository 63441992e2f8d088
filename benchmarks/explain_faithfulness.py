"""Faithfulness of word explanations, as ERASER measures it (DeYoung et al., 2020): Owen values against
leaving one word out, and what the workbench colours of each.

    python -m benchmarks.explain_faithfulness [--dataset politeness] [--embedder e5-small-qint8]
        [--train 300] [--texts 200] [--k 3]

A trait is trained (effort low) on --train texts of the dataset's pool (half per pole, a fixed draw;
benchmarks.quality's loaders), and held-out texts of 4 to 32 words it scores at most 0.1 or at least 0.9
(each scored alone, as an explanation embeds it) are explained, up to --texts of them, by each method:

- `owen`: the engine's `Scorer.explain` (Owen values over a balanced binary partition of the words);
- `leave_one_out`: r(text) - r(text without the word), the method it replaced, computed here.

Per method, with p the probability of the text's side (its score above 0.5, else 1 - score):

- `comprehensiveness`: p(text) - p(text without the k words pushing most towards its side), against the
  same for k random words (mean of 5 draws): `ratio` is the first over the second;
- `sufficiency`: p(text) - p(those k words alone), lower is better (random k words alone beside it);
- `highlighted_words`: the texts with at least one word coloured towards their side (|strength| ≥
  `NOISE_FLOOR`, the rule for words alone);
- `highlighted`: the texts with at least one unit coloured towards their side, words or phrases as the
  workbench colours them (`core.engine.explain.coloured_units`);
- `seconds_30_words`: the median warm time of explaining a 30-word text (three runs).

Writes benchmarks/results/explain_faithfulness.json.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality import LOADERS, RESULTS, Dataset
from core.contract import DEFAULT_EMBEDDER, nearer_pole_is_positive
from core.embedders import get_embedder
from core.engine import Sample, Scorer, train
from core.engine.explain import NOISE_FLOOR, coloured_units, filler_noise
from harness.datasets import datasets_dir

RANDOM_DRAWS = 5
WORDS = (4, 32)  # texts explained whole (one window)


def leave_one_out(scorer: Scorer, text: str) -> np.ndarray:
    """Per word, r(text) - r(text without it), each text embedded alone: the old explanation."""
    words = text.split()
    variants = [" ".join(words[:i] + words[i + 1 :]) for i in range(len(words))]
    base = float(scorer.axis_vectors(scorer.embed([text]))[0, 0])
    without = [float(scorer.axis_vectors(scorer.embed([v]))[0, 0]) if v else 0.0 for v in variants]
    return base - np.array(without)


def owen(scorer: Scorer, text: str) -> np.ndarray:
    return np.array([e.axis for e in next(iter(scorer.explain(text).values()))])


METHODS: dict[str, Callable[[Scorer, str], np.ndarray]] = {"leave_one_out": leave_one_out, "owen": owen}


def _side_probability(scorer: Scorer, text: str, side: int) -> float:
    score = float(scorer.score(text)[0, 0]) if text.strip() else 0.5
    return score if side > 0 else 1.0 - score


def _keep(words: list[str], drop: set[int]) -> str:
    return " ".join(w for i, w in enumerate(words) if i not in drop)


def trained_scorer(ds: Dataset, embedder_name: str, n_train: int) -> Scorer:
    """A scorer trained on `n_train` of the dataset's pool texts, half a pole (seed 0)."""
    embedder = get_embedder(embedder_name)
    rng = np.random.default_rng(0)
    chosen = np.concatenate(
        [rng.choice(np.flatnonzero(ds.pool_y == pole), size=n_train // 2, replace=False) for pole in (1, 0)]
    )
    samples = [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i]), id=int(n))
               for n, i in enumerate(chosen)]  # fmt: skip
    return Scorer.from_snapshot(
        train([ds.trait], samples, embedder=embedder, effort="low").snapshot, embedder
    )


def measure(dataset: str, embedder_name: str, n_train: int, n_texts: int, k: int) -> dict[str, Any]:
    ds = LOADERS[dataset](datasets_dir())
    scorer = trained_scorer(ds, embedder_name, n_train)
    noise = float(filler_noise(scorer)[0])

    candidates = [t for t in ds.test_texts if WORDS[0] <= len(t.split()) <= WORDS[1]]
    near = [t for t, s in zip(candidates, scorer.score(candidates)[:, 0], strict=True) if not 0.15 < s < 0.85]
    confident: list[tuple[str, int]] = []
    for text in near:  # a batch picks the candidates; each is then scored alone, as explanations embed it
        score = float(scorer.score(text)[0, 0])
        if score <= 0.1 or score >= 0.9:
            confident.append((text, 1 if nearer_pole_is_positive(score) else -1))
        if len(confident) == n_texts:
            break

    if not confident:
        raise SystemExit(f"no held-out text of {dataset} is scored at most 0.1 or at least 0.9")
    draws = np.random.default_rng(1)
    result: dict[str, Any] = {"dataset": dataset, "embedder": embedder_name, "train": n_train, "k": k}
    result["texts"] = len(confident)
    result["low"] = sum(side < 0 for _, side in confident)
    for name, method in METHODS.items():
        comp, comp_random, suff, suff_random, highlighted, highlighted_words = [], [], [], [], 0, 0
        for text, side in confident:
            words = text.split()
            towards = method(scorer, text) * side  # positive: pushes towards the text's side
            highlighted_words += bool(np.any(towards / noise >= NOISE_FLOOR))
            units = coloured_units((towards * side / noise).tolist())
            highlighted += any(u.strength * side >= NOISE_FLOOR for u in units)
            top = set(np.argsort(-towards, kind="stable")[:k].tolist())
            p = _side_probability(scorer, text, side)
            comp.append(p - _side_probability(scorer, _keep(words, top), side))
            rest = set(range(len(words))) - top
            suff.append(p - _side_probability(scorer, _keep(words, rest), side))
            random_comp, random_suff = [], []
            for _ in range(RANDOM_DRAWS):
                picked = set(draws.choice(len(words), size=min(k, len(words)), replace=False).tolist())
                random_comp.append(p - _side_probability(scorer, _keep(words, picked), side))
                others = set(range(len(words))) - picked
                random_suff.append(p - _side_probability(scorer, _keep(words, others), side))
            comp_random.append(float(np.mean(random_comp)))
            suff_random.append(float(np.mean(random_suff)))
        thirty = " ".join((" ".join(t for t, _ in confident) or "word " * 30).split()[:30])
        method(scorer, thirty)  # warm
        times = []
        for _ in range(3):
            start = time.perf_counter()
            method(scorer, thirty)
            times.append(time.perf_counter() - start)
        result[name] = {
            "comprehensiveness": round(float(np.mean(comp)), 4),
            "comprehensiveness_random": round(float(np.mean(comp_random)), 4),
            "ratio": round(float(np.mean(comp)) / max(float(np.mean(comp_random)), 1e-9), 2),
            "sufficiency": round(float(np.mean(suff)), 4),
            "sufficiency_random": round(float(np.mean(suff_random)), 4),
            "highlighted_words": highlighted_words,
            "highlighted": highlighted,
            "seconds_30_words": round(float(np.median(times)), 3),
        }
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"| method | comprehensiveness (top {result['k']} / random) | ratio | sufficiency (top / random) | "
        "texts with a word coloured on their side | with a word or phrase coloured | 30-word text, warm |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    n = result["texts"]
    for name in METHODS:
        r = result[name]
        comp = f"{r['comprehensiveness']:.3f} / {r['comprehensiveness_random']:.3f}"
        suff = f"{r['sufficiency']:.3f} / {r['sufficiency_random']:.3f}"
        lines.append(
            f"| {name} | {comp} | {r['ratio']:.1f}× | {suff} | {r['highlighted_words']} of {n} | "
            f"{r['highlighted']} of {n} | {r['seconds_30_words']:.2f} s |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dataset", default="politeness", choices=list(LOADERS))
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--train", type=int, default=300, help="training texts, half per pole")
    parser.add_argument("--texts", type=int, default=200, help="confidently scored held-out texts explained")
    parser.add_argument("--k", type=int, default=3, help="words deleted or kept")
    parser.add_argument("--output", type=Path, default=RESULTS / "explain_faithfulness.json")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    result = measure(args.dataset, args.embedder, args.train, args.texts, args.k)
    print(f"{result['texts']} texts ({result['low']} low) in {time.perf_counter() - start:.0f} s\n")
    print(markdown(result))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"noise_floor": NOISE_FLOOR, **result}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
