"""Training that picks the body per model (`auto`), measured from the quality benchmark's draws.

    python -m benchmarks.quality --embedder e5-small-qint8 --sizes 8 32 256 --splits 5 \\
        --output benchmarks/results/quality_bodies_e5_small_qint8.json
    python -m benchmarks.quality --embedder mpnet-base --sizes 8 32 256 --splits 5 \\
        --output benchmarks/results/quality_bodies_mpnet_base.json
    python -m benchmarks.body_choice

Both runs draw the same samples per (dataset, size, split), so each draw's `auto` arm is the body
`core.engine.body_choice.choose` keeps on the out-of-fold ROC-AUC each run's training reported, scored by that
body's test ROC-AUC on the draw. The datasets are English, so both bodies are candidates. Prints a markdown
table (each body, `auto`, LR on each frozen body; mean test ROC-AUC over the draws), the targets' checks, and
`auto` against e5 alone when a larger body must lead by a wider margin (MARGINS), and writes
benchmarks/results/body_choice.json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.body_choice import TIE, Candidate, choose

RESULTS = Path(__file__).resolve().parent / "results"
BODIES = {  # cheapest first, as choose() wants them
    "e5-small": RESULTS / "quality_bodies_e5_small_qint8.json",
    "mpnet-base": RESULTS / "quality_bodies_mpnet_base.json",
}


MARGINS = (TIE, 0.02, 0.05, 0.1)  # leads on the out-of-fold figure a larger body must have to be kept


def cells(files: dict[str, Path], tie: float = TIE) -> list[dict[str, Any]]:
    runs = {body: json.loads(path.read_text()) for body, path in files.items()}
    keyed = {body: {(r["dataset"], r["per_pole"]): r for r in run["rows"]} for body, run in runs.items()}
    shared = set.intersection(*(set(k) for k in keyed.values()))
    out = []
    for dataset, n in sorted(shared, key=lambda k: (k[1], k[0])):
        rows = {body: keyed[body][(dataset, n)]["per_split"] for body in files}
        splits = min(len(r["prior"]) for r in rows.values())
        picked, auto = [], []
        for s in range(splits):
            candidates = [Candidate(body, rows[body]["oof"][s]) for body in files]
            body = choose(candidates, tie).embedder_id
            picked.append(body)
            auto.append(rows[body]["prior"][s])
        cell: dict[str, Any] = {
            "dataset": dataset,
            "per_pole": n,
            "splits": splits,
            "auto": float(np.mean(auto)),
        }
        for body in files:
            cell[body] = float(np.mean(rows[body]["prior"][:splits]))
            cell[f"lr {body}"] = float(np.mean(rows[body]["logreg"][:splits]))
            cell[f"picked {body}"] = picked.count(body)
        out.append(cell)
    return out


def checks(table: list[dict[str, Any]], bodies: Sequence[str]) -> dict[str, Any]:
    """The targets: `auto` within TIE of the best single body in every cell; never below the first (today's
    default) by more than TIE; and its mean lead over it at 32 and 256 per pole where any body is better."""
    base = bodies[0]
    within = all(c["auto"] >= max(c[b] for b in bodies) - TIE for c in table)
    never_below = all(c["auto"] >= c[base] - TIE for c in table)
    lead = {}
    for n in (32, 256):
        gains = [
            c["auto"] - c[base] for c in table if c["per_pole"] == n and max(c[b] for b in bodies) > c[base]
        ]
        lead[n] = float(np.mean(gains)) if gains else None
    return {
        "auto_within_tie_of_best": within,
        "never_below_default": never_below,
        "mean_lead_where_better": lead,
    }


def margins(files: dict[str, Path], bodies: Sequence[str]) -> list[dict[str, Any]]:
    """`auto` against the first body alone when another must lead it by each of MARGINS out of fold: per
    size, the mean and the worst cell's test ROC-AUC difference, and the draws that left the first body."""
    base, out = bodies[0], []
    for margin in MARGINS:
        table = cells(files, margin)
        for n in sorted({c["per_pole"] for c in table}):
            cell = [c for c in table if c["per_pole"] == n]
            gains = [c["auto"] - c[base] for c in cell]
            moved = sum(c["splits"] - c[f"picked {base}"] for c in cell)
            out.append(
                {
                    "margin": margin,
                    "per_pole": n,
                    "mean_vs_first": float(np.mean(gains)),
                    "worst_vs_first": float(min(gains)),
                    "draws_moved": moved,
                    "draws": sum(c["splits"] for c in cell),
                }
            )
    return out


def margins_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| margin | per pole | auto − e5: mean | worst cell | draws moved off e5 |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['margin']:.3f} | {r['per_pole']} | {r['mean_vs_first']:+.3f} | {r['worst_vs_first']:+.3f} "
            f"| {r['draws_moved']} of {r['draws']} |"
        )
    return "\n".join(lines)


def markdown(table: list[dict[str, Any]], bodies: Sequence[str]) -> str:
    head = " | ".join([*bodies, "auto", *(f"LR on {b}" for b in bodies), "auto picked"])
    lines = [f"| dataset | per pole | {head} |", "|---|---:|" + "---:|" * (2 * len(bodies) + 1) + "---|"]
    for c in table:
        figures = " | ".join(f"{c[k]:.3f}" for k in [*bodies, "auto", *(f"lr {b}" for b in bodies)])
        picked = ", ".join(f"{b} {c[f'picked {b}']}" for b in bodies)
        lines.append(f"| {c['dataset']} | {c['per_pole']} | {figures} | {picked} |")
    for n in sorted({c["per_pole"] for c in table}):
        cell = [c for c in table if c["per_pole"] == n]
        means = " | ".join(
            f"{np.mean([c[k] for c in cell]):.3f}" for k in [*bodies, "auto", *(f"lr {b}" for b in bodies)]
        )
        lines.append(f"| **mean** | {n} | {means} | |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=RESULTS / "body_choice.json")
    args = parser.parse_args(argv)
    bodies = list(BODIES)
    table = cells(BODIES)
    result = checks(table, bodies)
    swept = margins(BODIES, bodies)
    print(markdown(table, bodies))
    print()
    print(margins_markdown(swept))
    print()
    print(json.dumps(result, indent=2))
    document = {"tie": TIE, "cells": table, "checks": result, "margins": swept}
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
