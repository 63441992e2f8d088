"""The figures the docs quote, rendered from the benchmarks' result files (`benchmarks/results/*.json`).

    python -m benchmarks.figures            # rewrites every generated block in README.md and docs/
    python -m benchmarks.figures --check    # exits 1 naming each block that disagrees with its result file

A page quotes a figure through a cog block (cogapp): the generator's call between `[[[cog` and `]]]` in an
HTML comment, its output below, up to `[[[end]]]`. So no figure is written by hand: a benchmark writes its
result file, this command writes the pages, and `tests/project/test_figures.py` fails while they disagree.
Each function here reads one result file and says what it shows; its link and wording live with it.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# Where generated blocks may be: the README and the docs (decision records are written once, never rendered).
PAGES = ("README.md", "docs/*.md", "docs/benchmarks/*.md", "docs/api/*.md")


def result(name: str) -> Any:  # Any: a result file's JSON, whose shape each benchmark owns
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def span(values: Iterable[float], fmt: str = "{:.1f}", unit: str = "") -> str:
    """A range as the pages write one: "1.7–1.8 s", or one figure when all agree."""
    ordered = sorted(values)
    low, high = fmt.format(ordered[0]), fmt.format(ordered[-1])
    return f"{low}{unit}" if low == high else f"{low}–{high}{unit}"


def signed(value: float) -> str:
    return f"{value:+.3f}"


# --- one function a figure: (the row's subject with its link, the figure) --------------------------------


def quality_default() -> tuple[str, str]:
    data = result("default_embedder")
    means = {
        per_pole: statistics.fmean(c["default"] for c in data["cells"] if c["per_pole"] == per_pole)
        for per_pole in (8, 32, 256)
    }
    checks = data["checks"]
    over_lr = " / ".join(signed(checks[str(p)]["mean_vs_lr_mpnet"]) for p in (8, 32))
    datasets = len({c["dataset"] for c in data["cells"]})
    return (
        f"[Quality of a new model](docs/benchmarks/quality-default.md) (the default embedder, mean ROC-AUC "
        f"over {datasets} English datasets, 5 draws a cell)",
        f"{means[8]:.3f} / {means[32]:.3f} / {means[256]:.3f} at 8 / 32 / 256 labels a pole; {over_lr} over "
        "logistic regression on frozen all-mpnet-base-v2 at 8 / 32",
    )


def scoring_load() -> tuple[str, str]:
    run = result("load_e5_small_qint8")["runs"]["sqlite-2p"]
    rounds = run["rounds"]
    ratio = statistics.fmean(r["ratio"] for r in rounds)
    p50 = statistics.fmean(r["service"]["p50_ms"] for r in rounds)
    p99 = statistics.fmean(r["service"]["p99_ms"] for r in rounds)
    return (
        "[Scoring under load](docs/benchmarks/speed.md#load-on-the-score-endpoint) "
        f"({run['clients']} clients, one text a request, `e5-small-qint8`, SQLite, "
        f"{run['api_processes']} API processes)",
        f"{ratio:.2f}× the in-process engine's texts/s on new texts (p50 / p99 {p50:.0f} / {p99:.0f} ms); "
        f"{run['service_warm']['throughput_rps']:.0f} requests/s on texts scored before",
    )


def scoring_fairness() -> tuple[str, str]:
    data = result("score_fairness_idle")
    run = next(r for r in data["runs"] if r["arm"] == "fair")
    alone = "no 429" if run["lone"]["429s"] == 0 else f"{run['lone']['429s']} × 429"
    return (
        f"[Fair scoring](docs/benchmarks/speed.md#scoring-fairness) (a colleague's one text beside another "
        f"caller's load, `{run['embedder']}`)",
        f"{run['tiny_ratio']:.2f}× (tiny texts) / {run['long_ratio']:.2f}× (long texts) its quiet latency "
        f"(target 2×); a caller alone: {alone}; SIGTERM to exit {run['sigterm_to_exit_s']:.1f} s",
    )


def first_run() -> tuple[str, str]:
    clone = result("first_run_fresh_clone")["runs"]
    demo = result("first_run_demo_trained")["runs"]
    return (
        "[First run](docs/benchmarks/start.md#first-run) (fresh clone, installed)",
        f"a usable page {span((r['start_to_page_s'] for r in clone), unit=' s')} after `make run` starts; "
        "the demo models trained "
        f"{span((r['start_to_demo_trained_s'] for r in demo), '{:.0f}', ' s')} after it",
    )


def page_speed() -> tuple[str, str]:
    data = result("pages")
    pages = [p for model in data["pages"].values() for p in model.values()]
    cold = max(p["cold_s"] for p in pages)
    warm = max(p["warm_s"] for p in pages)
    return (
        f"[Page speed](docs/benchmarks/speed.md#page-speed-in-chromium) (Chromium, "
        f"{data['big_model_samples']:,}-sample model)",
        f"every page ≤ {cold:.2f} s cold, ≤ {warm:.2f} s warm",
    )


def memory() -> tuple[str, str]:
    data = result("memory_flat")
    largest = max(data["sizes"], key=lambda s: s["stored_chars"])
    return (
        f"[Memory as stored text grows](docs/benchmarks/memory.md) (texts of {data['chars_per_text']:,} "
        "characters, both embedders loaded)",
        f"API ≤ {largest['api_peak_mb'] / 1000:.2f} GB, "
        f"worker ≤ {largest['worker_peak_mb'] / 1000:.2f} GB "
        f"with {largest['stored_chars'] / 1e6:.0f} M characters stored",
    )


def recovery() -> tuple[str, str]:
    cells = result("recovery").values()
    workers = [c for c in cells if c["kill"] == "worker"]
    return (
        "[Recovery](docs/benchmarks/speed.md#recovery-after-kill--9) (`kill -9` of a worker mid-training)",
        f"the run re-queued in {span((c['requeued_s'] for c in workers), unit=' s')}, "
        f"the model ready again in {span((c['busy_after_kill_s'] for c in workers), unit=' s')}",
    )


def team() -> tuple[str, str]:
    data = result("team")
    return (
        f"[A team labelling](docs/benchmarks/labelling.md#a-team-labelling-one-model) ({data['annotators']} "
        f"annotators through the API, {data['duration_s'] / 60:.0f} min)",
        f"{data['labels_posted']:,} labels, {data['refusals']} refused, {data['lost']} lost, "
        f"{data['collisions']} texts handed to two people; a label p50 / p95 {data['label_p50_ms']:.0f} / "
        f"{data['label_p95_ms']:.0f} ms",
    )


HEADLINES: tuple[Callable[[], tuple[str, str]], ...] = (
    quality_default,
    scoring_load,
    scoring_fairness,
    first_run,
    page_speed,
    memory,
    recovery,
    team,
)


def headlines() -> str:
    """The README's table of headline figures."""
    rows = ["| what | figure |", "|---|---|"]
    rows += ["| {} | {} |".format(*figure()) for figure in HEADLINES]
    return "\n".join(rows) + "\n"


# --- rendering ----------------------------------------------------------------------------------------------


def pages(root: Path = ROOT) -> list[Path]:
    """The files that hold a generated block."""
    found = {path for pattern in PAGES for path in root.glob(pattern)}
    return sorted(p for p in found if "[[[cog" in p.read_text(encoding="utf-8"))


def render(check: bool, root: Path = ROOT) -> int:
    """Rewrites (or, with `check`, compares) every generated block; cog's exit status."""
    # Dev only: the docs are rendered in a checkout, never by the workbench.
    from cogapp import Cog  # type: ignore[import-untyped]  # cogapp ships no types

    argv = ["cog", "-I", str(root), "--check" if check else "-r", *map(str, pages(root))]
    return Cog().main(argv)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.figures", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 on a difference")
    args = parser.parse_args(argv)
    return render(args.check)


if __name__ == "__main__":
    sys.exit(main())
