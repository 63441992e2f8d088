"""Agreement benchmark: `python -m benchmarks.agreement [--embedders e5-small-qint8 hashing] [--draws 1000]`.

Needs the shared datasets (../shared/datasets, or $SCORING_DATASETS): the Stanford politeness requests, read
at run time, never copied. Each request has five ratings (`Score1..Score5`, 1-25) from named MTurk workers
(`TurkId1..TurkId5`). A vote is one rating: quality (score - 1) / 24, annotator the worker's id. Requests that
occur more than once in their file are left out (their rows would be two units in the CSV but one text here),
so both computations below see exactly the same units.

(a) Krippendorff's alpha, interval (on the score) and nominal (on the side of the scale's middle: above 13,
below it, or 13 itself, i.e. quality 0.5: neutral, a category of its own), computed directly from the CSV's
workers x requests matrix with the `krippendorff` package, beside `core.engine.trait_agreement` on the same
votes. They must agree (checked to 1e-9).

(b) The human ceiling against the model's agreement (`core.engine.human_ceiling`): per community, 30 % of
the requests (fixed seed) are held out; a model is trained with `core.engine.train` (effort medium) on the
rest, one soft sample per request (the counted mean of its five votes), and scored on the held-out requests,
whose five raters give the leave-one-annotator-out targets; 95 % paired bootstrap intervals over texts.
"Together" trains on both communities' training requests and is measured on both held-out sets. Also the
held-out ROC-AUC against the counted pole (requests whose counted quality is neutral left out), for
reference. Embedders: `core.contract.DEFAULT_EMBEDDER` and `hashing` (fast); vectors cached under
benchmarks/.cache/.

Prints the tables and writes benchmarks/results/agreement.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from benchmarks.quality import CACHE, TRAITS, LookupEmbedder
from core.contract import DEFAULT_EMBEDDER, MAX_TEXT_CHARS, pole_of
from core.embedders import get_embedder
from core.engine import Scorer, Vote, count_votes, human_ceiling, train, training_samples, trait_agreement
from core.engine.text_utils import stable_seed
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results" / "agreement.json"
FILES = {"wikipedia": "wikipedia.annotated.csv", "stack-exchange": "stack-exchange.annotated.csv"}
SCALE = (1, 25)
MIDDLE = 13  # the scale's middle: quality (13 - 1) / 24 = 0.5, core.contract's neutral quality
HELD_OUT = 0.3
EFFORT = "medium"
TRAIT = TRAITS["politeness"]


@dataclass
class Community:
    name: str
    texts: list[str]  # stripped requests, one per unit
    scores: np.ndarray  # units x 5, on 1-25
    raters: np.ndarray  # units x 5, worker ids
    held_out: np.ndarray  # bool per unit


def load(base: Path, name: str) -> Community:
    df = pd.read_csv(base / "stanford_politeness" / FILES[name])
    text = df["Request"].astype(str).str.strip()
    usable = (text.str.len() > 0) & (text.str.len() <= MAX_TEXT_CHARS) & ~text.duplicated(keep=False)
    df, text = df[usable], text[usable]
    rng = np.random.default_rng(stable_seed("agreement", name))
    return Community(
        name=name,
        texts=text.tolist(),
        scores=df[[f"Score{i}" for i in range(1, 6)]].to_numpy(dtype=np.float64),
        raters=df[[f"TurkId{i}" for i in range(1, 6)]].to_numpy(dtype=str),
        held_out=rng.random(len(df)) < HELD_OUT,
    )


def together(parts: Sequence[Community]) -> Community:
    return Community(
        name="together",
        texts=[t for p in parts for t in p.texts],
        scores=np.concatenate([p.scores for p in parts]),
        raters=np.concatenate([p.raters for p in parts]),
        held_out=np.concatenate([p.held_out for p in parts]),
    )


def quality(score: np.ndarray | float) -> Any:
    return (np.asarray(score) - SCALE[0]) / (SCALE[1] - SCALE[0])


def votes(c: Community, rows: np.ndarray | None = None) -> list[Vote]:
    """One vote per rating, in CSV order (ids in that order)."""
    chosen = range(len(c.texts)) if rows is None else np.flatnonzero(rows)
    out: list[Vote] = []
    for i in chosen:
        for k in range(5):
            out.append(
                Vote(TRAIT.key, c.texts[i], float(quality(c.scores[i, k])), str(c.raters[i, k]), id=len(out))
            )
    return out


def direct_alpha(c: Community) -> dict[str, float]:
    """The `krippendorff` package on the CSV's workers x requests matrix (NaN where a worker did not rate)."""
    workers = sorted(set(c.raters.ravel()))
    row = {w: i for i, w in enumerate(workers)}
    matrix = np.full((len(workers), len(c.texts)), np.nan)
    for unit in range(len(c.texts)):
        for k in range(5):
            matrix[row[c.raters[unit, k]], unit] = c.scores[unit, k]
    # Three categories: above the middle, below it, the middle itself (neutral), as the engine's pole rule.
    sides = np.sign(matrix - MIDDLE)  # NaN stays NaN
    return {
        "interval": float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")),
        "nominal": float(krippendorff.alpha(reliability_data=sides, level_of_measurement="nominal")),
    }


def part_a(c: Community) -> dict[str, Any]:
    started = time.perf_counter()
    ours = trait_agreement(votes(c), limit=0)
    ours_s = time.perf_counter() - started
    direct = direct_alpha(c)
    assert ours.krippendorff_alpha_interval is not None and ours.krippendorff_alpha_nominal is not None
    for level, value in (
        ("interval", ours.krippendorff_alpha_interval),
        ("nominal", ours.krippendorff_alpha_nominal),
    ):
        if abs(value - direct[level]) > 1e-9:
            raise SystemExit(
                f"{c.name}: our {level} alpha {value} differs from the package's {direct[level]}"
            )
    return {
        "requests": len(c.texts),
        "votes": 5 * len(c.texts),
        "raters": len(ours.annotators),
        "texts_with_votes": ours.texts_with_votes,
        "direct": {k: round(v, 6) for k, v in direct.items()},
        "ours": {
            "interval": round(ours.krippendorff_alpha_interval, 6),
            "nominal": round(ours.krippendorff_alpha_nominal, 6),
        },
        # Of all pairs of ratings of one request, the share on the same side of the middle.
        "pairwise_same_side": round(
            sum(p.same_pole for p in ours.pairwise) / sum(p.texts for p in ours.pairwise), 4
        ),
        "ours_s": round(ours_s, 2),
    }


def embedder_for(name: str, texts: Sequence[str]) -> LookupEmbedder:
    embedder = get_embedder(name)
    unique = sorted(set(texts))
    digest = hashlib.sha256("\x1e".join(unique).encode("utf-8")).hexdigest()[:16]
    path = CACHE / f"agreement-{embedder.id}-{digest}.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        CACHE.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        vectors = embedder.encode(unique)
        print(
            f"embedded {len(unique)} requests with {name} in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        np.save(path, vectors)
    return LookupEmbedder(embedder, unique, vectors)


def part_b(c: Community, lookup: LookupEmbedder, draws: int) -> dict[str, Any]:
    train_counted = count_votes(votes(c, ~c.held_out))
    test_counted = count_votes(votes(c, c.held_out))
    started = time.perf_counter()
    result = train([TRAIT], training_samples(train_counted), embedder=lookup, effort=EFFORT)
    train_s = time.perf_counter() - started
    texts = [x.text for x in test_counted]
    scores = Scorer.from_snapshot(result.snapshot, embedder=lookup).score(texts)[:, 0]
    ceiling = human_ceiling(test_counted, dict(zip(texts, scores.tolist(), strict=True)), draws=draws, seed=0)
    assert ceiling is not None
    poles = [pole_of(x.quality) for x in test_counted]
    on = np.array([p != "neutral" for p in poles])  # a neutral request is on neither pole
    positive = [p == "positive" for p, kept in zip(poles, on, strict=True) if kept]
    return {
        "train_texts": len(train_counted),
        "held_out_texts": len(test_counted),
        "held_out_roc_auc": round(float(roc_auc_score(positive, scores[on])), 4),
        **ceiling.as_dict(),
        "train_s": round(train_s, 1),
    }


def _iv(d: dict[str, Any] | None, percent: bool = False) -> str:
    if d is None:
        return "–"
    if percent:
        return f"{d['value']:.0%} [{d['ci_low']:.0%}, {d['ci_high']:.0%}]"
    return f"{d['value']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}]"


def markdown(out: dict[str, Any]) -> str:
    lines = [
        "| requests | raters | α interval: package / ours | α nominal (middle): package / ours "
        "| same side, rater pairs |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, a in out["alpha"].items():
        lines.append(
            f"| {name} ({a['requests']:,}) | {a['raters']} | {a['direct']['interval']:.4f} / "
            f"{a['ours']['interval']:.4f} | {a['direct']['nominal']:.4f} / {a['ours']['nominal']:.4f} "
            f"| {a['pairwise_same_side']:.3f} |"
        )
    lines += [
        "",
        "| embedder | held-out requests | human ceiling [95 % CI] | model agreement [95 % CI] "
        "| share of the ceiling [95 % CI] | held-out AUC |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for embedder, by in out["ceiling"].items():
        for name, b in by.items():
            if name == "id":
                continue
            lines.append(
                f"| {embedder} | {name} ({b['held_out_texts']:,}; trained on {b['train_texts']:,}) "
                f"| {_iv(b['human_ceiling'])} | {_iv(b['model_agreement'])} "
                f"| {_iv(b['share_of_ceiling'], percent=True)} | {b['held_out_roc_auc']:.3f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", nargs="+", default=[DEFAULT_EMBEDDER, "hashing"])
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    base = datasets_dir()
    parts = [load(base, name) for name in FILES]
    communities = [*parts, together(parts)]
    out: dict[str, Any] = {
        "alpha": {c.name: part_a(c) for c in communities},
        "ceiling": {},
        "held_out_share": HELD_OUT,
        "effort": EFFORT,
        "draws": args.draws,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }
    for name in args.embedders:
        lookup = embedder_for(name, communities[-1].texts)
        out["ceiling"][name] = {
            "id": lookup.id,
            **{c.name: part_b(c, lookup, args.draws) for c in communities},
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(markdown(out))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
