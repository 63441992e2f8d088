"""Explanation benchmark: does the noise floor keep filler words uncoloured, whatever the trait?

    python -m benchmarks.explain [--embedders e5-small-qint8 minilm] [--sizes 0 8 30 100] [--texts 40]
        [--datasets politeness subjectivity abuse]

Per dataset (benchmarks.quality's loaders: Stanford politeness, NewsSD subjectivity, ConvAbuse), embedder and
number of training samples per pole (0: zero-shot, the trait's pole texts alone), a trait is trained (effort
low, a fixed draw from the pool) and --texts held-out texts of 4 to 32 words are explained with the engine
(`Scorer.explain`). Reported per trait:

- `noise`: the trait's filler noise, r's root-mean-square change when a function word is removed from the
  engine's neutral probe sentences (`core.engine.explain.filler_noise`), the unit of a word's strength;
- `function_p90_axis`: the 90th percentile of |axis| over the texts' own function words (the, a, of, …),
  and `function_p90_logit` the same on the score's logit (`k` times it, `k` the calibration slope);
- `function_coloured`, `_short`, `_long`: the share of those coloured (|strength| ≥ `NOISE_FLOOR`), in all
  texts, in texts of at most 12 words and in longer ones;
- `coloured`: the share of all words coloured; `coloured_axis_floor`: the same with a constant floor of
  0.25 on |axis| instead (an eighth of the way between the poles), for comparison;
- `confident_words`, `confident_coloured`: the words of the texts scored below 0.1 or above 0.9, and the
  share of them coloured (every one was, when colours were stretched to a sentence's largest word).

The floor is right when function words stay mostly uncoloured and the share of words coloured does not
depend on how many samples trained the trait. Writes benchmarks/results/explain.json.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality import LOADERS, RESULTS
from core.embedders import get_embedder
from core.engine import Sample, Scorer, train
from core.engine.explain import FILLER_WORDS, NOISE_FLOOR, filler_noise
from harness.datasets import datasets_dir

EMBEDDERS = ("e5-small-qint8", "minilm")
SIZES = (0, 8, 30, 100)
AXIS_FLOOR = 0.25  # the constant floor on r it is compared with
SHORT = 12  # words: a text this short moves more per word removed


def _bare(word: str) -> str:
    return re.sub(r"[^\w']", "", word.lower())


def measure(dataset: str, embedder_name: str, per_pole: int, n_texts: int) -> dict[str, Any]:
    ds = LOADERS[dataset](datasets_dir())
    embedder = get_embedder(embedder_name)
    rng = np.random.default_rng(0)
    samples: list[Sample] = []
    if per_pole:
        chosen = np.concatenate(
            [rng.choice(np.flatnonzero(ds.pool_y == pole), size=per_pole, replace=False) for pole in (1, 0)]
        )
        samples = [Sample(ds.trait.key, ds.pool_texts[i], float(ds.pool_y[i]), id=int(n))
                   for n, i in enumerate(chosen)]  # fmt: skip
    result = train([ds.trait], samples, embedder=embedder, effort="low")
    scorer = Scorer.from_snapshot(result.snapshot, embedder)
    texts = [t for t in ds.test_texts if 4 <= len(t.split()) <= 32]
    np.random.default_rng(1).shuffle(texts)
    axis, strength, function, short, confident = [], [], [], [], []
    for text in texts[:n_texts]:
        score = float(scorer.score(text)[0, 0])
        for effect in scorer.explain(text)[ds.trait.key]:
            axis.append(abs(effect.axis))
            strength.append(abs(effect.strength))
            function.append(_bare(effect.word) in FILLER_WORDS)
            short.append(len(text.split()) <= SHORT)
            confident.append(not 0.1 <= score <= 0.9)
    a, s = np.array(axis), np.array(strength)
    f, sh, c = np.array(function), np.array(short), np.array(confident)
    coloured = s >= NOISE_FLOOR
    slope = float(result.snapshot["traits"][0]["k"])
    p90 = float(np.percentile(a[f], 90)) if f.any() else None

    def share(mask: np.ndarray) -> float | None:
        return round(float(coloured[mask].mean()), 3) if mask.any() else None

    return {
        "dataset": dataset,
        "embedder": embedder_name,
        "per_pole": per_pole,
        "texts": min(n_texts, len(texts)),
        "words": int(len(a)),
        "noise": round(float(filler_noise(scorer)[0]), 4),
        "k": round(slope, 3),
        "function_p90_axis": round(p90, 3) if p90 is not None else None,
        "function_p90_logit": round(slope * p90, 3) if p90 is not None else None,
        "function_coloured": share(f),
        "function_coloured_short": share(f & sh),
        "function_coloured_long": share(f & ~sh),
        "coloured": share(np.ones_like(f)),
        "coloured_axis_floor": round(float((a >= AXIS_FLOOR).mean()), 3),
        "confident_words": int(c.sum()),
        "confident_coloured": share(c),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    def pct(value: float | None) -> str:
        return "–" if value is None else f"{100 * value:.0f}%"

    lines = [
        "| dataset | embedder | per pole | noise | fn p90 axis | fn coloured (≤12 / longer) | coloured | "
        "with 0.25 on axis | confident coloured |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        function = f"{pct(r['function_coloured_short'])} / {pct(r['function_coloured_long'])}"
        lines.append(
            f"| {r['dataset']} | {r['embedder']} | {r['per_pole']} | {r['noise']:.3f} | "
            f"{'–' if r['function_p90_axis'] is None else r['function_p90_axis']} | "
            f"{pct(r['function_coloured'])} ({function}) | "
            f"{pct(r['coloured'])} | {pct(r['coloured_axis_floor'])} | "
            f"{pct(r['confident_coloured'])} of {r['confident_words']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--embedders", nargs="+", default=list(EMBEDDERS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--texts", type=int, default=40, help="held-out texts explained per trait")
    parser.add_argument("--output", type=Path, default=RESULTS / "explain.json")
    args = parser.parse_args(argv)

    rows = []
    for embedder_name in args.embedders:
        for dataset in args.datasets:
            for per_pole in args.sizes:
                start = time.perf_counter()
                rows.append(measure(dataset, embedder_name, per_pole, args.texts))
                took = time.perf_counter() - start
                print(f"  {embedder_name} {dataset} {per_pole} per pole: {took:.0f} s", flush=True)
    table = markdown(rows)
    print()
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    meta = {"noise_floor": NOISE_FLOOR, "axis_floor": AXIS_FLOOR, "short_words": SHORT, "rows": rows}
    args.output.write_text(json.dumps(meta, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
