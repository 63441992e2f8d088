"""What a model on both embedders (`blend`) costs beside one on e5-small alone: scoring and training CPU.

    SCORING_EMBEDDER_DIR=... python -m benchmarks.blend_cost [--samples 5000] [--score-texts 100]

Scoring: `--score-texts` texts of 30 words (the politeness requests joined and cut), each scored alone
through `Scorer` from a trained snapshot on one-thread sessions, as the service's uncached scores are:
e5-small-qint8 alone, and the blend (its snapshot and `BlendEmbedder`, as the service and a local `Scorer`
score it); then the same texts again from a cache of their vectors (each embedder's, as the service keeps
them), which must stay a read. Training: `--samples` of the politeness requests (Stanford politeness, both
communities, their top and bottom quartiles: half a pole each), effort medium, on e5-small alone (`train`)
and on both embedders (`core.engine.blend.train_blend`), every text embedded afresh. CPU seconds of the
process (every thread) and wall seconds; both embedders are loaded before anything is timed. Writes
benchmarks/results/blend_cost.json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.embedder_choice_cost import thirty_words, timed
from benchmarks.quality import RESULTS, TRAITS
from core.embedders import CachedEmbedder, MemoryStore, get_embedder
from core.embedders.blend import BLEND_PARTS, BlendEmbedder
from core.engine import Sample, Scorer, train
from core.engine.blend import train_blend
from harness.datasets import datasets_dir

EFFORT = "medium"


def requests() -> pd.DataFrame:
    """Every politeness request of the two communities in its file's top or bottom quartile, `y` 1 polite."""
    frames = []
    for file in ("wikipedia.annotated.csv", "stack-exchange.annotated.csv"):
        df = pd.read_csv(datasets_dir() / "stanford_politeness" / file)
        low, high = df["Normalized Score"].quantile([0.25, 0.75])
        df = df[(df["Normalized Score"] <= low) | (df["Normalized Score"] >= high)]
        frames.append(
            pd.DataFrame({"text": df["Request"], "y": (df["Normalized Score"] >= high).astype(int)})
        )
    return pd.concat(frames, ignore_index=True).drop_duplicates("text")


def samples(frame: pd.DataFrame, n: int) -> list[Sample]:
    rng = np.random.default_rng(0)
    out = []
    for label in (1, 0):
        side = frame[frame.y == label].text.to_numpy()
        out += [
            Sample("politeness", str(t), float(label)) for t in side[rng.permutation(len(side))[: n // 2]]
        ]
    return out


def per_text(scorer: Scorer, texts: Sequence[str]) -> float:
    """CPU seconds a text, each scored alone."""
    _, cpu, _ = timed(lambda: [scorer.score([t]) for t in texts])
    return cpu / len(texts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--score-texts", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS / "blend_cost.json")
    parser.add_argument(
        "--scoring-threads",
        type=int,
        default=1,
        help="intra-op threads of the scoring sessions: 1, as the service's (service/domain/embedding.py)",
    )
    parser.add_argument("--no-training", action="store_true", help="time scoring only")
    args = parser.parse_args(argv)
    trait = TRAITS["politeness"]
    frame = requests()
    embedders = [get_embedder(b) for b in BLEND_PARTS]
    for embedder in embedders:
        embedder.encode(["a first text loads the model"])
    blend = BlendEmbedder(embedders)

    # Scoring: models trained on a few samples (what is timed does not depend on them).
    few = samples(frame, 64)
    e5_model = train([trait], few, embedder=embedders[0], effort="low")
    blend_model = train_blend([trait], few, embedder=blend, effort="low")
    texts = thirty_words(frame.text.tolist()[1000:], args.score_texts)
    scoring_embedders = [b.with_threads(args.scoring_threads) for b in embedders]  # type: ignore[attr-defined]
    for embedder in scoring_embedders:
        embedder.encode(["a first text loads the session"])
    alone = per_text(Scorer.from_snapshot(e5_model.snapshot, embedder=scoring_embedders[0]), texts)
    both = per_text(
        Scorer.from_snapshot(blend_model.snapshot, embedder=BlendEmbedder(scoring_embedders)), texts
    )
    cached = BlendEmbedder([CachedEmbedder(b, store=MemoryStore()) for b in scoring_embedders])
    cached_scorer = Scorer.from_snapshot(blend_model.snapshot, embedder=cached)
    per_text(cached_scorer, texts)  # fills the cache
    read = per_text(cached_scorer, texts)
    scoring = {
        "texts": len(texts),
        "scoring_threads": args.scoring_threads,
        "e5_alone_cpu_s": alone,
        "blend_cpu_s": both,
        "blend_over_e5": both / alone,
        "blend_cached_cpu_s": read,
        "blend_cached_over_e5_uncached": read / alone,
    }
    print(json.dumps(scoring, indent=2), flush=True)
    if args.no_training:
        args.output.write_text(json.dumps({"effort": EFFORT, "scoring": scoring}, indent=2) + "\n")
        return 0

    # Training on `--samples`, every text embedded afresh (the embedders keep no vectors between calls).
    many = samples(frame, args.samples)
    _, e5_cpu, e5_wall = timed(lambda: train([trait], many, embedder=embedders[0], effort=EFFORT))
    _, blend_cpu, blend_wall = timed(lambda: train_blend([trait], many, embedder=blend, effort=EFFORT))
    training = {
        "samples": len(many),
        "median_words": float(np.median([len(s.text.split()) for s in many])),
        "e5_alone": {"cpu_s": round(e5_cpu, 1), "wall_s": round(e5_wall, 1)},
        "blend": {"cpu_s": round(blend_cpu, 1), "wall_s": round(blend_wall, 1)},
        "blend_over_e5_cpu": blend_cpu / e5_cpu,
        "blend_over_e5_wall": blend_wall / e5_wall,
    }
    print(json.dumps(training, indent=2), flush=True)
    args.output.write_text(
        json.dumps({"effort": EFFORT, "scoring": scoring, "training": training}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
