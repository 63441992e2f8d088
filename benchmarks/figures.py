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
    run = next(r for r in result("score_fairness")["runs"] if r["arm"] == "fair")
    alone = "no 429" if run["lone"]["429s"] == 0 else f"{run['lone']['429s']} × 429"
    return (
        "[Fair scoring](docs/benchmarks/speed.md#scoring-fairness) (a colleague's one text beside another "
        f"caller's load, the default `{run['embedder']}` model)",
        f"{run['tiny_ratio']:.2f}× (tiny texts) / {run['long_ratio']:.2f}× (long texts) its quiet latency "
        f"(target 2×); a caller alone: {alone}; SIGTERM to exit {run['sigterm_to_exit_s']:.0f} s",
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
    # SQLite's alone: on PostgreSQL a dead worker's run now waits out the heartbeat too (a free advisory lock
    # does not prove its process exited), which these cells predate.
    workers = [c for c in cells if c["kill"] == "worker" and c["database"] == "sqlite"]
    return (
        "[Recovery](docs/benchmarks/speed.md#recovery-after-kill--9) (`kill -9` of a worker mid-training, "
        "SQLite)",
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


def calibration() -> str:
    """docs/benchmarks/quality-default.md's calibration tables (benchmarks/calibration.py renders them)."""
    from benchmarks.calibration import markdown  # the engine and scikit-learn: imported only for this page

    return markdown(result("calibration")) + "\n"


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


# --- the benchmark pages' tables: one function a table, each reading its result files ----------------------


def table(header: str, rows: Iterable[Iterable[object]]) -> str:
    """A Markdown table; `header` names the columns as "what | >figure | ..." (">": right-aligned)."""
    names = [h.strip() for h in header.split("|")]
    rule = "|" + "|".join("---:" if n.startswith(">") else "---" for n in names) + "|"
    lines = ["| " + " | ".join(n.lstrip(">") for n in names) + " |", rule]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def mb(value: float) -> str:
    return f"{value:,.0f} MB"


def ms(value: float) -> str:
    return f"{value:,.0f} ms"


def p50_p95(run: dict[str, Any], what: str, unit: str = "ms") -> str:
    """A team run's median and 95th percentile of `what` ("label", "suggest"), in ms or s."""
    low, high = run[f"{what}_p50_ms"], run[f"{what}_p95_ms"]
    return f"{low / 1000:.1f} s / {high / 1000:.1f} s" if unit == "s" else f"{ms(low)} / {ms(high)}"


# memory.md


MEMORY_PHASES = {
    "bodies": "models made, trained on 4 short texts",
    "import": "import (stored, nothing embedded yet)",
    "suggest": "suggestion (API: the labels; worker: the pool)",
    "train": "training",
}


def memory_phases() -> str:
    """memory.md: each phase's peak RSS at each size, API then worker."""
    sizes = result("memory_flat")["sizes"]
    header = "phase | " + " | ".join(
        f">{proc} {s['texts_per_model']} texts" for proc in ("API", "worker") for s in sizes
    )
    rows = [
        [label, *(mb(s["phases"][phase][f"{proc}_mb"]) for proc in ("api", "worker") for s in sizes)]
        for phase, label in MEMORY_PHASES.items()
    ]
    return table(header, rows)


def memory_growth() -> str:
    """memory.md: the peaks at the largest size and how far they moved from the smallest."""
    data = result("memory_flat")
    small, large = data["sizes"][0], data["sizes"][-1]
    return (
        f"At {large['stored_chars'] / 1e6:.0f} M characters stored "
        f"(tenfold {small['stored_chars'] / 1e6:.1f} M) "
        f"the API peaks at {mb(large['api_peak_mb'])}, the worker at {mb(large['worker_peak_mb'])}; "
        f"the peaks moved by +{data['growth_mb']['api_peak_mb']} MB (API) and "
        f"+{data['growth_mb']['worker_peak_mb']} MB (worker).\n"
    )


# labelling.md


def team_row(run: dict[str, Any]) -> list[object]:
    return [
        run["annotators"],
        f"{run['labels_posted']:,} in {run['duration_s']:.0f} s",
        p50_p95(run, "suggest", "s"),
        p50_p95(run, "label"),
        run["collisions"],
        run["lost"],
        run["refusals"],
    ]


def team_table() -> str:
    """labelling.md: ten people labelling one model through the API."""
    header = (
        ">annotators | >labels (2xx) | >suggest p50 / p95 | >label p50 / p95 | >collisions | >lost | >refused"
    )
    return table(header, [team_row(result("team"))])


def team_scale_gold() -> str:
    """labelling.md: the poles against a 5-point scale with gold items, run back to back."""
    poles, gold = result("team-poles-paired"), result("team-scale-gold")
    header = "labelled by | >labels (gold answers) | >suggest p50 / p95 | >label p50 / p95 | >refused | >lost"
    rows = [
        [
            name,
            f"{run['labels_posted']:,}" + (f" ({run['gold_answers']})" if run["gold_answers"] else ""),
            p50_p95(run, "suggest", "s"),
            p50_p95(run, "label"),
            run["refusals"],
            run["lost"],
        ]
        for name, run in (("poles", poles), (f"{gold['scale']} points, gold {gold['gold_rate']}", gold))
    ]
    ratio = gold["label_p95_ms"] / poles["label_p95_ms"]
    return table(header, rows) + f"\nLabel p95, scale and gold against the poles: **{ratio:.2f}×**.\n"


FLOOD_RUNS = {
    "team-quiet-60s": "quiet, 10 people",
    "team-flood": "9 people + a flooding key, limits on",
    "team-flood-unlimited": "9 people + a flooding key, limits off",
}


def team_flood() -> str:
    """labelling.md: one key labelling at full speed beside nine colleagues."""
    header = (
        "run | >people's labels | >label p50 / p95 | >429s the people met | "
        ">the script: sent (201 / 409 / 429) | >versions"
    )
    rows = []
    for name, label in FLOOD_RUNS.items():
        run = result(name)
        flood = run["flood"]
        sent = "–"
        if flood:
            codes = " / ".join(f"{flood['statuses'].get(c, 0):,}" for c in ("201", "409", "429"))
            sent = f"{flood['sent']:,} ({codes})"
        rows.append(
            [label, run["labels_posted"], p50_p95(run, "label"), run["rate_limited"], sent, run["versions"]]
        )
    return table(header, rows)


def suggestions_vs_random() -> str:
    """labelling.md: labels needed to reach random's AUC at 64 labels a pole, suggestions against random."""
    header = (
        "dataset (pool, positive share) | >target AUC | >needed: suggestions | >random | >ratio | "
        ">AUC at 64 labels: sugg. / random | >mean AUC, 8–128 labels"
    )

    def needed(arm: dict[str, Any]) -> str:
        runs = arm["runs_needed"]
        return f"{arm['needed']} ({arm['runs_needed_median']:.0f}, {min(runs)}–{max(runs)})"

    rows = [
        [
            f"{s['dataset']} ({s['pool']:,}, {s['pool_positive_share']:.0%})",
            f"{s['target_auc']:.3f}",
            needed(s["suggest"]),
            needed(s["random"]),
            f"{s['ratio']:.2f}",
            f"{s['suggest']['auc_at_64']:.3f} / {s['random']['auc_at_64']:.3f}",
            f"{s['suggest']['mean_auc_to_128']:.3f} / {s['random']['mean_auc_to_128']:.3f}",
        ]
        for s in result("labelling")["simulation"]
    ]
    return table(header, rows)


def suggest_speed() -> str:
    speed = result("labelling")["speed_100k_s"]
    others = [v for k, v in speed.items() if k != "auto"]
    return f"`auto` {speed['auto']:.2f} s, other modes {span(others, '{:.2f}', ' s')}"


def evaluation() -> str:
    """labelling.md: a second version's evaluation reuses the first's embeddings."""
    data = result("evaluation")
    return (
        f"v1 with a cold embedding cache {data['first_version_s']:,.1f} s, v2 on the same texts "
        f"**{data['second_version_s']:.1f} s, {data['ratio']:.1%} of v1**; "
        f"the PR curve {data['pr_curve_s']:.2f} s; "
        f"v1 against v2 (`GET …/evaluation/compare`) {data['compare_s']:.2f} s"
    )


def mean_range(values: list[float], bold: bool = False) -> str:
    mean = f"**{values[0]:.2f}**" if bold else f"{values[0]:.2f}"
    return f"{mean} ({values[1]:.2f}–{values[2]:.2f})"


def flag_rows(run: dict[str, Any], best: tuple[str, str], noise: float = 0.05) -> list[list[object]]:
    """A row a dataset: the engine's precision / recall (mean, range), cleanlab's, the best at recall 0.5."""
    facts = {r["dataset"]: r for r in run["rows"] if "draw" not in r}
    rows: list[list[object]] = []
    for s in (s for s in run["summary"] if s["noise"] == noise):
        fact = facts[s["dataset"]]
        rows.append(
            [
                f"{s['dataset']} ({fact['samples']:,}, {fact['oof_auc']:.2f})",
                f"{mean_range(s['engine_precision'], True)} / {mean_range(s['engine_recall'])}",
                f"{s['cleanlab_precision'][0]:.2f} / {s['cleanlab_recall'][0]:.2f}",
                " / ".join(f"{s[f'{b}_best_precision_at_recall_0.5'][0]:.2f}" for b in best),
            ]
        )
    return rows


def flags_noise() -> str:
    """labelling.md: the mislabel flags on pools with 5% of labels flipped."""
    header = "dataset (pool, out-of-fold AUC) | engine precision / recall | cleanlab | best at recall 0.5"
    return table(header, flag_rows(result("flags_noise")["noise"], ("score", "evidence")))


def flags_clean_share() -> str:
    rows = [r for r in result("flags_noise")["noise"]["rows"] if "draw" not in r]
    engine = "/".join(f"{r['engine_flagged_share']:.1%}" for r in rows)
    cleanlab = "/".join(f"{r['cleanlab_flagged_share']:.0%}" for r in rows)
    demo = ", ".join(
        f"{m['likely_mislabelled']} of {m['samples']}" for m in result("flags_noise")["demo"]["models"]
    )
    return f"Clean pools flagged: engine {engine}, cleanlab {cleanlab}. Demo models flagged: {demo}."


def flags_agreed() -> str:
    """labelling.md: the flags on texts every rater agrees on, and on politeness's two sources apart."""
    data = result("flags_agreed")
    header = (
        "base (texts, clean out-of-fold AUC) | engine precision / recall | cleanlab | "
        "best at recall 0.5: evidence / oracle"
    )
    best = ("evidence", "oracle")
    rows = flag_rows(data["e5-small-qint8"], best)
    rows += flag_rows(data["e5-small-qint8 politeness-wikipedia politeness-stack-exchange"], best)
    return table(header, rows)


def flags_speed() -> str:
    big, small = result("flags"), result("flags_2000")
    return (
        f"{big['samples']:,} samples **{big['cached_check_s']:.2f} s** cached ({big['first_check_s']:.1f} s "
        f"embedding first); {small['samples']:,}: {small['cached_check_s']:.2f} s cached"
    )


# scale.md


DATABASES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}


def on_database(part: str, db: str) -> Any:
    """A scale part's run on one database (`scale_<part>.json`: SQLite; `scale_<part>_postgres.json`)."""
    return result(f"scale_{part}" if db == "sqlite" else f"scale_{part}_postgres")[db]


def scale_imports() -> str:
    """scale.md: the import rate as the model grows, per database."""
    header = (
        "database | >samples in the model | >adding them (total) | >rate at that size | "
        ">× the rate at 1,000 | >median batch | >API CPU a batch | >listing all, 500 a page | "
        ">writer's wait p99 / max"
    )
    rows = [
        [
            name,
            f"{s['samples']:,}",
            f"{s['adding_s']:.1f} s",
            f"{s['rate_per_s']:,.0f} /s",
            f"{s['rate_vs_first']:.2f}",
            f"{s['batch_ms']:.1f} ms",
            ms(s["api_cpu_ms_per_batch"]),
            f"{s['listing_s']:.1f} s",
            f"{s['lock_wait_p99_ms']:.0f} / {s['lock_wait_max_ms']:.0f} ms",
        ]
        for db, name in DATABASES.items()
        for s in result(f"scale_imports_1m_{db}")[db]["samples"]
    ]
    return table(header, rows)


def scale_speedup() -> str:
    """scale.md: a training's time by worker count."""
    header = (
        "database | >workers | >training | >embedding phase | >× faster (training / embedding) | "
        "shards each worker took by message | >RSS of the workers"
    )
    rows = [
        [
            name,
            t["workers"],
            f"{t['training_s']:.1f} s",
            f"{t['embedding_s']:.1f} s",
            f"{t['speedup']:.2f} / {t['embedding_speedup']:.2f}",
            " and ".join(map(str, t["shards_taken_by_message"])),
            mb(t["memory_mb"]["workers"]),
        ]
        for db, name in DATABASES.items()
        for t in on_database("speedup", db)["trainings"]
    ]
    return table(header, rows)


def scale_mixed() -> str:
    """scale.md: 30 minutes of imports, trainings and scoring at once."""
    header = (
        "database | >import batches | >trainings (and reopens) | >score requests | >errors | "
        ">problem lines | >writer's wait p50 / p99 / max | >write transactions over 1 s | >RSS API / workers"
    )
    rows = []
    for db, name in DATABASES.items():
        run = on_database("mixed", db)
        req, wait, memory = run["requests"], run["lock_wait"], run["memory_mb"]
        wait_ms = f"{wait['p50_ms']:,.1f} / {wait['p99_ms']:,.0f} / {wait['max_ms']:,.0f} ms"
        slow = run["slow_writes"]["count"] if db == "sqlite" else "(SQLite only)"
        rows.append(
            [
                name,
                f"{req['import']:,}",
                f"{req['train']} ({req['reopen']})",
                f"{req['score']:,}",
                run["errors"],
                len(run["log_problems"]),
                wait_ms,
                slow,
                f"{memory['api']:,.0f} / {mb(memory['workers'])}",
            ]
        )
    return table(header, rows)


def scale_models() -> str:
    """scale.md: many small models, scored at random."""
    header = (
        ">models | >create + train | >scoring p50 / p99 | >errors | >listing all (250 a page) | "
        ">RSS API: models made / after scoring | >RSS workers"
    )
    rows = []
    for name in ("scale_models_400", "scale_models"):
        run = result(name)["sqlite"]
        score, memory = run["scoring"], run["memory_mb"]
        rows.append(
            [
                f"{run['models']:,}",
                f"{run['create_and_train_s']:.1f} s",
                f"{score['p50_ms']:.1f} / {score['p99_ms']:.1f} ms",
                score["errors"],
                f"{run['list_s']:.3g} s",
                f"{memory['create']['api']:.0f} / {mb(memory['score']['api'])}",
                mb(memory["score"]["workers"]),
            ]
        )
    return table(header, rows)


def million_cells(run: dict[str, Any]) -> list[str]:
    """One database's column of the million-sample table."""
    first, last = run["import"]["checkpoints"][0], run["import"]["checkpoints"][-1]
    page, mem, wait = run["samples_page"], run["memory_mb"], run["lock_wait"]
    quick = [
        page[k] * 1000 for k in ("get_model_s", "traits_s", "first_page_s", "trait_filter_s", "next_page_s")
    ]
    flags = " / ".join(f"{f['seconds']:.1f}" for f in run["flags"]["by_size"])
    api = [mem[k]["api"] for k in ("import", "reads", "export")]
    return [
        f"{last['adding_s']:.1f} s ({first['rate_per_s']:,.0f} → {last['rate_per_s']:,.0f} /s)",
        f"{run['training']['training_s']:.1f} s ({run['training']['embedding_s']:.1f} s)",
        f"{span(quick, '{:.0f}', ' ms')} each",
        f"{page['provenance_filter_s']:.2f} s",
        f"{page['model_list_s'] * 1000:.0f} ms",
        f"{run['export']['seconds']:.1f} s",
        f"{flags} s",
        f"{run['pool_import']['seconds']:.1f} s ({run['pool_import']['rate_per_s']:,.0f} /s)",
        f"{run['suggest']['first_s']:.1f} / {run['suggest']['again_s']:.1f} s",
        f"{run['backup']['seconds']:.1f} s, {mb(run['backup']['size_mb'])}",
        f"{span(api, '{:.0f}')} / {mb(max(mem['suggest']['api'], mem['backup']['api']))}",
        f"{mem['import']['workers']:,.0f} / {mb(mem['train']['workers'])}",
        f"{wait['p99_ms']:.0f} ms / {wait['max_ms'] / 1000:.1f} s",
        str(len(run.get("log_problems", []))),
    ]


MILLION_STEPS = (
    "import: a million samples (rate at 1,000 → at 1,000,000)",
    "training, 2 workers (of it the sharded embedding)",
    "Samples page: model, traits, first page, trait filter, next page",
    "Samples page: provenance filter (`feedback`: no sample has it)",
    "model list",
    "export, every sample 500 a page",
    "Flags check on 2,000 / 8,000 samples (in the workbench's process)",
    "pool: a million texts imported (rate of the last batches)",
    "suggestions from the million-text pool: first / again",
    "backup (database and embedding cache)",
    "peak RSS, API process: import, reads, export / suggestions, backup",
    "peak RSS, both workers: import / training",
    "writer's wait, the whole run: p99 / max",
    "problem lines in the logs",
)


def scale_million() -> str:
    """scale.md: a million samples through every step, on each database."""
    columns = [million_cells(result(f"scale_million_hashing_{db}")[db]) for db in DATABASES]
    header = "step | " + " | ".join(f">{name}" for name in DATABASES.values())
    return table(header, zip(MILLION_STEPS, *columns, strict=True))


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
