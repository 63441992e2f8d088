"""Sample flags benchmark: `python -m benchmarks.flags [--samples N] [--embedder minilm|hashing]`.

The Samples page's flags (`app.flags.flag_samples`: out-of-fold mislabels and kNN outliers) on N samples of
one trait, the worst case (the neighbour search is quadratic within a trait). Texts: Stanford politeness
requests, read from ../shared/datasets at run time; a request is a positive sample when its politeness rank
is in the upper half. The embedder is wrapped in the in-memory cache the page uses for stored samples, so the
first check embeds every text and a second one (after fixing a few) finds them all cached.

Prints the figures and writes benchmarks/results/flags.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime
from pathlib import Path

from app.flags import flag_samples
from benchmarks.evaluation import load
from core.embedders import get_embedder
from core.embedders.cache import CachedEmbedder, MemoryStore

RESULTS = Path(__file__).resolve().parent / "results" / "flags.json"


def run(samples: int, embedder_name: str, repeats: int) -> dict[str, object]:
    texts = load()[:samples]
    rows = [
        {"id": i, "trait": "politeness", "text": t, "quality": 1.0 if q >= 0.5 else 0.0}
        for i, (t, q) in enumerate(texts)
    ]
    embedder = CachedEmbedder(get_embedder(embedder_name), MemoryStore(max_items=len(rows) + 1))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    flagged = flag_samples(rows, embedder)
    cold = time.perf_counter() - started
    warm = []
    for _ in range(repeats):
        started = time.perf_counter()
        again = flag_samples(rows, embedder)
        warm.append(time.perf_counter() - started)
        assert again == flagged  # the cache changes nothing but the time
    kinds = [f["flag"] for f in flagged]
    return {
        "samples": len(rows),
        "embedder": embedder_name,
        "first_check_s": round(cold, 2),
        "cached_check_s": round(min(warm), 2),
        "cached_runs_s": [round(w, 2) for w in warm],
        "mislabel_flags": kinds.count("likely mislabelled"),
        "outlier_flags": kinds.count("outlier"),
        "load_average_before": round(load_before, 1),
        "load_average_after": round(os.getloadavg()[0], 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--repeats", type=int, default=2, help="cached checks (the best is reported)")
    args = parser.parse_args()
    result = run(args.samples, args.embedder, args.repeats)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
