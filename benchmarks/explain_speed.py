"""How long the Demo page's explanation of a 30-word text takes, warm.

`python -m benchmarks.explain_speed`: the faithfulness benchmark's model (politeness, 300 training requests,
half a pole, effort low), then one explanation each of the first held-out requests of 30 words or more, cut to
30 words, after one warm-up; prints the median, fastest and slowest.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from benchmarks.explain_faithfulness import trained_scorer
from benchmarks.quality import LOADERS
from core.contract import DEFAULT_EMBEDDER
from harness.datasets import datasets_dir

WORDS = 30


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--texts", type=int, default=7)
    args = parser.parse_args(argv)
    ds = LOADERS["politeness"](datasets_dir())
    scorer = trained_scorer(ds, args.embedder, 300)
    long = [t for t in ds.test_texts if len(t.split()) >= WORDS][: args.texts]
    texts = [" ".join(t.split()[:WORDS]) for t in long]
    scorer.explain(texts[0])  # warm: the model's session and the tokenizer load once
    times = []
    for text in texts:
        start = time.perf_counter()
        scorer.explain(text)
        times.append(time.perf_counter() - start)
    print(
        f"{args.embedder}: {len(times)} texts of {WORDS} words, median {statistics.median(times):.2f} s, "
        f"fastest {min(times):.2f} s, slowest {max(times):.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
