"""What training on the best embedder (`auto`) costs beside e5-small alone, and what scoring on mpnet costs.

    python -m benchmarks.embedder_choice_cost [--samples 5000] [--score-texts 100]

Training: `--samples` of VADER's movie-review snippets (benchmarks.quality_vader; half a pole each, English,
a median of 18 words), effort medium, once on e5-small-qint8 alone (`train`) and once with both embedders
(`harness.embedder_comparison.train_on_best_embedder`, which compares them on `COMPARE_LABELS` samples and
trains the kept one on all); CPU seconds of the process (every thread) and wall seconds. Both embedders are
loaded before either is timed. Scoring: `--score-texts` texts of 30 words (snippets joined and cut), each
encoded alone, as an uncached score is, by each embedder: CPU per text. Writes
benchmarks/results/embedder_choice_cost.json.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import quality_vader
from benchmarks.quality import CACHE, RESULTS
from core.embedders import get_embedder
from core.engine import Sample, train
from harness.embedder_comparison import COMPARE_LABELS, train_on_best_embedder

EFFORT = "medium"


def timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    """(what `work` returns, CPU seconds of the process, wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = work()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def samples(n: int) -> list[Sample]:
    frame = quality_vader.ground_truth(CACHE / "vader", "movies")
    frame = frame[frame.rating.abs() > quality_vader.THRESHOLD].drop_duplicates("text")
    rng = np.random.default_rng(0)
    out = []
    for label, side in ((1.0, frame[frame.rating > 0]), (0.0, frame[frame.rating < 0])):
        texts = side.text.to_numpy()[rng.permutation(len(side))[: n // 2]]
        out += [Sample("sentiment", str(t), label) for t in texts]
    return out


def thirty_words(texts: Sequence[str], count: int) -> list[str]:
    words = " ".join(texts).split()
    return [" ".join(words[i * 30 : (i + 1) * 30]) for i in range(count)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--score-texts", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS / "embedder_choice_cost.json")
    args = parser.parse_args(argv)

    e5, mpnet = get_embedder("e5-small-qint8"), get_embedder("mpnet-base")
    for embedder in (e5, mpnet):
        embedder.encode(["a first text loads the model"])
    trait = quality_vader.TRAITS["movies"]
    data = samples(args.samples)
    alone, alone_cpu, alone_wall = timed(lambda: train([trait], data, embedder=e5, effort=EFFORT))
    choice, auto_cpu, auto_wall = timed(
        lambda: train_on_best_embedder([trait], data, [e5, mpnet], ["en"] * len(data), effort=EFFORT)
    )
    texts = thirty_words([s.text for s in data], args.score_texts)
    per_text = {}
    for name, embedder in (("e5-small-qint8", e5), ("mpnet-base", mpnet)):
        start = time.process_time()
        for text in texts:
            embedder.encode([text])
        per_text[name] = (time.process_time() - start) / len(texts)
    result = {
        "samples": len(data),
        "effort": EFFORT,
        "compare_labels": COMPARE_LABELS,
        "e5_alone": {"cpu_s": alone_cpu, "wall_s": alone_wall},
        "auto": {
            "cpu_s": auto_cpu,
            "wall_s": auto_wall,
            "chosen": choice.chosen,
            "candidates": choice.as_json().get("candidates", []),  # none when not compared
        },
        "auto_over_e5": {"cpu": auto_cpu / alone_cpu, "wall": auto_wall / alone_wall},
        "score_cpu_per_30_word_text_s": per_text,
        "mpnet_over_e5_scoring": per_text["mpnet-base"] / per_text["e5-small-qint8"],
        "e5_alone_roc_auc": alone.metrics[trait.key]["roc_auc"],
    }
    print(json.dumps(result, indent=2))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
