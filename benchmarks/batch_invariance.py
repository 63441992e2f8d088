"""int8 activations per tensor (before) vs per token: `python -m benchmarks.batch_invariance [--texts 200]`.

For each int8 recipe (default: e5-small-qint8, minilm-qint8v2) both graphs are built once into the embedders
directory (per tensor under its own `…-per-tensor` id, never served), then, in one process and interleaved
rounds at 1 intra-op thread (so drifting load hits both alike): CPU per text encoding the first N politeness
requests in the embedder's own batches (8, sorted by length), the median over rounds; the largest difference
of a text's vector encoded alone vs in those batches (max |a - b| over coordinates, and min cosine); and the
cosine between the two schemes. Prints a markdown table and writes benchmarks/results/batch_invariance.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.embedders import politeness
from core.embedders.e5_quantized import QI8, E5QuantizedEmbedder
from core.embedders.quantized import QI8V2, QuantizedMiniLMEmbedder

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "batch_invariance.json"


def make(name: str, per_token: bool) -> Any:
    if name == "e5-small-qint8":
        return E5QuantizedEmbedder(recipe=dataclasses.replace(QI8, per_token=per_token), threads=1)
    if name == "minilm-qint8v2":
        return QuantizedMiniLMEmbedder(recipe=dataclasses.replace(QI8V2, per_token=per_token), threads=1)
    raise SystemExit(f"unknown int8 embedder {name!r}: e5-small-qint8 or minilm-qint8v2")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", nargs="+", default=["e5-small-qint8", "minilm-qint8v2"])
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--alone", type=int, default=100, help="texts also encoded one at a time")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    texts = politeness(args.texts)
    embs = {(name, tok): make(name, tok) for name in args.embedders for tok in (False, True)}
    for emb in embs.values():
        emb.encode(texts[:16])  # build once, load, warm up before any timing
    cpu: dict[tuple[str, bool], list[float]] = {key: [] for key in embs}
    vectors: dict[tuple[str, bool], np.ndarray] = {}
    for _ in range(args.rounds):
        for key, emb in embs.items():
            start = time.process_time()
            vectors[key] = emb.encode(texts)
            cpu[key].append(time.process_time() - start)
    rows: list[dict[str, Any]] = []
    for (name, tok), emb in embs.items():
        alone = np.stack([emb.encode([t])[0] for t in texts[: args.alone]])
        batched = vectors[(name, tok)][: args.alone]
        other = vectors[(name, not tok)]
        rows.append(
            {
                "embedder": name,
                "id": emb.id,
                "activations": "per token" if tok else "per tensor",
                "cpu_ms_per_text_1t": round(1000 * float(np.median(cpu[(name, tok)])) / len(texts), 3),
                "cpu_ms_per_text_1t_rounds": [round(1000 * c / len(texts), 3) for c in cpu[(name, tok)]],
                "alone_vs_batch_max_abs": float(np.abs(alone - batched).max()),
                "alone_vs_batch_min_cosine": round(float((alone * batched).sum(axis=1).min()), 6),
                "cosine_to_other_scheme_min": round(
                    float((vectors[(name, tok)] * other).sum(axis=1).min()), 5
                ),
            }
        )
    for before, after in zip(rows[::2], rows[1::2], strict=True):  # per tensor, then per token
        after["cpu_ratio_to_per_tensor"] = round(
            after["cpu_ms_per_text_1t"] / before["cpu_ms_per_text_1t"], 3
        )
    print("| embedder | activations | CPU/text, 1 thread | alone vs batch: max abs / min cosine |")
    print("|---|---|---:|---:|")
    for r in rows:
        print(
            f"| `{r['embedder']}` | {r['activations']} | {r['cpu_ms_per_text_1t']:.2f} ms | "
            f"{r['alone_vs_batch_max_abs']:.2e} / {r['alone_vs_batch_min_cosine']} |"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps({"texts": len(texts), "rounds": args.rounds, "rows": rows}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
