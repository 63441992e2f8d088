"""Training that picks the embedder per model (`auto`), measured from the quality benchmark's draws.

    python -m benchmarks.quality --embedder e5-small-qint8 --datasets all --sizes 8 32 256 --splits 5 \\
        --pool-per-pole 300 --test 400 --no-plain \\
        --output benchmarks/results/quality_embedders_e5_small_qint8.json
    python -m benchmarks.quality --embedder mpnet-base --datasets all --sizes 8 32 256 --splits 5 \\
        --pool-per-pole 300 --test 400 --no-plain \\
        --output benchmarks/results/quality_embedders_mpnet_base.json
    python -m benchmarks.embedder_choice

Both runs draw the same samples per (dataset, size, split), so each draw's `auto` arm is the embedder
`harness.embedder_comparison` keeps: the cheapest when the samples' median word count is under `MIN_WORDS` or
a pole has fewer than `MIN_POLE` samples, else the one `choose` keeps on the out-of-fold ROC-AUC each run's
training reported on the compared subset (`comparison_subset`; all the samples up to `COMPARE_LABELS`),
scored by that embedder's test ROC-AUC on the draw. The datasets are English, so both embedders are
candidates. Prints a markdown table (each embedder, `auto`, the best embedder per draw, LR on each frozen
embedder; mean test ROC-AUC over the draws), the targets' checks, `auto` against e5 alone when a larger
embedder must lead by a wider margin (MARGINS, every size compared: what MIN_POLE and TIE rest on), and how
far the out-of-fold figure was from the test figure; writes benchmarks/results/embedder_choice.json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.embedder_choice import TIE, Candidate
from harness.embedder_comparison import MIN_POLE, MIN_WORDS, choose

RESULTS = Path(__file__).resolve().parent / "results"
EMBEDDERS = {  # cheapest first, as choose() wants them
    "e5-small": RESULTS / "quality_embedders_e5_small_qint8.json",
    "mpnet-base": RESULTS / "quality_embedders_mpnet_base.json",
}


#: e5-small alone with 10 draws a cell, recording each out-of-fold figure's standard error:
#: `python -m benchmarks.quality --embedder e5-small-qint8 --datasets all --sizes 8 32 256 --splits 10
#: --pool-per-pole 300 --test 400 --no-plain --output benchmarks/results/quality_oof_e5_small_qint8.json`
OOF = RESULTS / "quality_oof_e5_small_qint8.json"
MARGINS = (
    0.005,
    0.01,
    TIE,
    0.05,
    0.1,
)  # leads on the out-of-fold figure a larger embedder must have to be kept


def pick(
    rows: dict[str, Any],
    s: int,
    per_pole: int,
    tie: float,
    min_words: float = MIN_WORDS,
    min_pole: int = MIN_POLE,
) -> str:
    """The embedder `auto` keeps on draw `s` of one cell (`rows`: each embedder's per-split figures)."""
    embedders = list(rows)
    words = rows[embedders[0]].get("median_words", [None] * (s + 1))[s]
    if per_pole < min_pole or (words is not None and words < min_words):
        return embedders[0]

    def figure(embedder: str) -> float | None:
        compared = rows[embedder].get("oof_compared", [None] * (s + 1))[s]
        return compared if compared is not None else rows[embedder]["oof"][s]

    return choose([Candidate(embedder, figure(embedder)) for embedder in embedders], tie).embedder_id


def cells(
    files: dict[str, Path], tie: float = TIE, min_words: float = MIN_WORDS, min_pole: int = MIN_POLE
) -> list[dict[str, Any]]:
    runs = {embedder: json.loads(path.read_text()) for embedder, path in files.items()}
    keyed = {
        embedder: {(r["dataset"], r["per_pole"]): r for r in run["rows"]} for embedder, run in runs.items()
    }
    shared = set.intersection(*(set(k) for k in keyed.values()))
    out = []
    for dataset, n in sorted(shared, key=lambda k: (k[1], k[0])):
        rows = {embedder: keyed[embedder][(dataset, n)]["per_split"] for embedder in files}
        splits = min(len(r["prior"]) for r in rows.values())
        picked, auto, best = [], [], []
        for s in range(splits):
            embedder = pick(rows, s, n, tie, min_words, min_pole)
            picked.append(embedder)
            auto.append(rows[embedder]["prior"][s])
            best.append(max(rows[b]["prior"][s] for b in files))
        cell: dict[str, Any] = {
            "dataset": dataset,
            "per_pole": n,
            "splits": splits,
            "auto": float(np.mean(auto)),
            "best per draw": float(np.mean(best)),
        }
        for embedder in files:
            cell[embedder] = float(np.mean(rows[embedder]["prior"][:splits]))
            cell[f"lr {embedder}"] = float(np.mean(rows[embedder]["logreg"][:splits]))
            cell[f"picked {embedder}"] = picked.count(embedder)
        out.append(cell)
    return out


def checks(table: list[dict[str, Any]], embedders: Sequence[str], arm: str = "auto") -> dict[str, Any]:
    """The targets, for `arm` (`auto`, or another column of `table`): never below the first embedder (today's
    default) by more than 0.01 in any cell; on movie-review snippets at 32 per pole within 0.01 of the better
    single embedder; the mean over the datasets at 32 per pole at least the first embedder's + 0.01."""
    base = embedders[0]
    worst = min(c[arm] - c[base] for c in table)
    movies = [c for c in table if c["dataset"] == "movies" and c["per_pole"] == 32]
    movies_gap = movies[0][arm] - max(movies[0][b] for b in embedders) if movies else None
    at32 = [c for c in table if c["per_pole"] == 32]
    lead32 = float(np.mean([c[arm] - c[base] for c in at32])) if at32 else None
    return {
        "worst_cell_vs_first": worst,
        "never_below_first_by_001": worst >= -0.01,
        "movies_32_vs_better_embedder": movies_gap,
        "movies_32_within_001": movies_gap is not None and movies_gap >= -0.01,
        "mean_32_vs_first": lead32,
        "mean_32_lead_001": lead32 is not None and lead32 >= 0.01,
    }


def honesty(files: dict[str, Path]) -> list[dict[str, Any]]:
    """How far each embedder's out-of-fold ROC-AUC was from its test ROC-AUC, per size: the mean and the worst
    shortfall (test − out-of-fold), and, where the runs recorded it, the share of draws whose test figure was
    within two standard errors of the out-of-fold one."""
    out = []
    for embedder, path in files.items():
        rows = json.loads(path.read_text())["rows"]
        for n in sorted({r["per_pole"] for r in rows if r["per_pole"] > 0}):
            gaps, covered, ses = [], [], []
            for r in rows:
                if r["per_pole"] != n:
                    continue
                split = r["per_split"]
                for i, (test, oof) in enumerate(zip(split["prior"], split["oof"], strict=True)):
                    if oof is None:
                        continue
                    gaps.append(test - oof)
                    se = split.get("oof_se", [None] * len(split["oof"]))[i]
                    if se is not None:
                        ses.append(se)
                        covered.append(abs(test - oof) <= 2 * se)
            out.append(
                {
                    "body": embedder,
                    "per_pole": n,
                    "draws": len(gaps),
                    "mean_test_minus_oof": float(np.mean(gaps)),
                    "worst_test_minus_oof": float(max(gaps, key=abs)),
                    "mean_se": float(np.mean(ses)) if ses else None,
                    "within_2se": float(np.mean(covered)) if covered else None,
                }
            )
    return out


def margins(files: dict[str, Path], embedders: Sequence[str]) -> list[dict[str, Any]]:
    """`auto` against the first embedder alone when another must lead it by each of MARGINS out of fold: per
    size, the mean and the worst cell's test ROC-AUC difference, and the draws that left the first
    embedder."""
    base, out = embedders[0], []
    for margin in MARGINS:
        table = cells(files, margin, min_pole=0)
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


def markdown(table: list[dict[str, Any]], embedders: Sequence[str]) -> str:
    keys = [*embedders, "auto", "best per draw", *(f"lr {b}" for b in embedders)]
    head = " | ".join(
        [*embedders, "auto", "best embedder per draw", *(f"LR on {b}" for b in embedders), "auto picked"]
    )
    lines = [f"| dataset | per pole | {head} |", "|---|---:|" + "---:|" * len(keys) + "---|"]
    for c in table:
        figures = " | ".join(f"{c[k]:.3f}" for k in keys)
        picked = ", ".join(f"{b} {c[f'picked {b}']}" for b in embedders)
        lines.append(f"| {c['dataset']} | {c['per_pole']} | {figures} | {picked} |")
    for n in sorted({c["per_pole"] for c in table}):
        cell = [c for c in table if c["per_pole"] == n]
        means = " | ".join(f"{np.mean([c[k] for c in cell]):.3f}" for k in keys)
        lines.append(f"| **mean** | {n} | {means} | |")
    return "\n".join(lines)


def honesty_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| embedder | per pole | draws | test − out-of-fold: mean | worst | mean s.e. | test within 2 s.e. |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        se = "–" if r["mean_se"] is None else f"{r['mean_se']:.3f}"
        within = "–" if r["within_2se"] is None else f"{r['within_2se']:.0%}"
        lines.append(
            f"| {r['body']} | {r['per_pole']} | {r['draws']} | {r['mean_test_minus_oof']:+.3f} "
            f"| {r['worst_test_minus_oof']:+.3f} | {se} | {within} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=RESULTS / "embedder_choice.json")
    args = parser.parse_args(argv)
    embedders = list(EMBEDDERS)
    table = cells(EMBEDDERS)
    result = checks(table, embedders)
    swept = margins(EMBEDDERS, embedders)
    honest = honesty({**EMBEDDERS, **({"e5-small, 10 draws": OOF} if OOF.exists() else {})})
    print(markdown(table, embedders))
    print()
    print(margins_markdown(swept))
    print()
    print(honesty_markdown(honest))
    print()
    print(json.dumps(result, indent=2))
    document = {
        "tie": TIE,
        "min_words": MIN_WORDS,
        "min_pole": MIN_POLE,
        "cells": table,
        "checks": result,
        "margins": swept,
        "out_of_fold_vs_test": honest,
    }
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
