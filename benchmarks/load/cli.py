"""`python -m benchmarks.load`: its options, and the rounds of one setup (see the package's docstring)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.load import report
from benchmarks.load.drive import LoadResult, drive, merged
from benchmarks.load.engine import Engine
from benchmarks.load.fleet import Service, running_service
from benchmarks.load.mixed import mixed_round
from benchmarks.load.models import build_and_train
from benchmarks.load.report import LIMITS_P99, LIMITS_THROUGHPUT, TARGET_RATIO, markdown, median_of
from benchmarks.load.texts import demo_slugs, score_texts
from core.demo import DemoModel, read_demo_model
from harness.service import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "load.json"


def run_one(
    database: str,
    args: argparse.Namespace,
    model: DemoModel,
    text_sets: list[list[str]],
    mixed_texts: list[str] | None = None,
) -> dict[str, Any]:
    """Rounds of (engine, service cold, engine) on fresh texts, so both sides are measured at the same
    moment: this machine's speed drifts by 20% or more over minutes, which a single reference taken before
    or after the load would turn into a biased ratio. The figure is the median over the rounds.

    The service runs the default settings, rate limits included; the load is sent with `--keys` scoring keys
    in turn, as many callers would, so no key exceeds its limit. A second service with every limit off
    serves the same model beside it, and the warm phase alternates between the two, so the limits' cost is
    measured at the same moment as what it costs."""
    print(f"[{database}] starting 2 × {args.api_processes} API process(es) (limits on, off) ...", flush=True)
    t0 = time.perf_counter()
    with (
        running_service(
            database, args.embedder, args.api_processes, args.worker, args.start_timeout
        ) as service,
        running_service(
            database, args.embedder, args.api_processes, args.worker, args.start_timeout, limits=False
        ) as unlimited,
    ):
        key = service.create_key()
        with service.http(key) as client:
            print(f"[{database}] training {model.name!r} ({len(model.samples)} samples) ...", flush=True)
            handle, version = build_and_train(client, model, args.effort, args.train_timeout)
        off_key = unlimited.create_key()
        with unlimited.http(off_key) as client:
            off_handle, _ = build_and_train(client, model, args.effort, args.train_timeout)
        keys, off_keys = service.scoring_keys(args.keys), unlimited.scoring_keys(args.keys)
        setup_s = time.perf_counter() - t0
        engine = Engine(version["snapshot"])
        urls, n = service.base_urls, args.clients
        rounds = []
        for r, texts in enumerate(text_sets, 1):
            print(
                f"[{database}] round {r}/{len(text_sets)}: engine, {n} clients on {len(texts)} new texts, "
                "engine ...",
                flush=True,
            )
            before, before_cpu = engine.cold(texts)
            cold = asyncio.run(
                drive(
                    urls,
                    keys,
                    handle,
                    texts,
                    n,
                    len(texts),
                    args.duration,
                    warmup=r == 1,
                    cpu_probe=service.cpu_seconds,
                )
            )
            after, after_cpu = engine.cold(texts)
            summary = cold.summary()
            engine_tps = (before + after) / 2
            engine_cpu = (before_cpu + after_cpu) / 2
            per_request = summary["service_cpu_ms_per_request"]
            rounds.append(
                {
                    "service": summary,
                    "engine_single_tps": [round(before, 2), round(after, 2)],
                    "engine_single_cpu_ms_per_text": round(engine_cpu, 3),
                    "ratio": round(summary["throughput_rps"] / engine_tps, 3),
                    # CPU time a text, engine / service: a check on the wall-clock ratio.
                    "cpu_ratio": round(engine_cpu / per_request, 3) if per_request else None,
                }
            )
        warm, warm_off = warm_pairs(
            database, args, service, keys, handle, unlimited, off_keys, off_handle, text_sets[0]
        )
        mixed = None
        if args.mixed_trainings and mixed_texts:
            print(
                f"[{database}] mixed: {n} clients scoring while {args.mixed_trainings} trainings run ...",
                flush=True,
            )
            idle = {k: median_of(rounds, k) for k in ("p50_ms", "p99_ms")}
            mixed = mixed_round(service, key, keys, model, mixed_texts, args, idle)
    extras = engine.extras(text_sets[0])
    errors = sum(x["service"]["errors"] for x in rounds) + warm.errors
    ratio = statistics.median(x["ratio"] for x in rounds)
    cpu_ratios = [x["cpu_ratio"] for x in rounds if x["cpu_ratio"] is not None]
    warm_s, off_s = warm.summary(), warm_off.summary()
    limits_cost = {
        "throughput_vs_off": round(warm_s["throughput_rps"] / off_s["throughput_rps"], 3),
        "p99_vs_off": round(warm_s["p99_ms"] / off_s["p99_ms"], 3),
    }
    limits_cost["target_met"] = (
        limits_cost["throughput_vs_off"] >= LIMITS_THROUGHPUT
        and limits_cost["p99_vs_off"] <= LIMITS_P99
        and warm.errors == 0
        and warm_off.errors == 0
    )
    return {
        "database": database,
        "model": handle,
        "version_no": version.get("version_no"),
        "api_processes": args.api_processes,
        "clients": args.clients,
        "keys": args.keys,
        "embedder": engine.embedder_id,
        "texts_per_round": len(text_sets[0]),
        "setup_s": round(setup_s, 1),
        "rounds": rounds,  # every text new to the service and to the engine
        "service_warm": warm_s,  # the first round's texts again, default limits
        "service_warm_limits_off": off_s,  # the same, every rate limit off, in turns with the above
        "limits_cost": limits_cost,
        "engine_extras": extras,
        "ratio_cold_vs_engine_single": ratio,
        "cpu_ratio_cold_vs_engine_single": statistics.median(cpu_ratios) if cpu_ratios else None,
        "ratio_warm_vs_engine_single_warm": round(warm_s["throughput_rps"] / extras["single_warm_tps"], 3),
        "errors": errors,
        "target_met": ratio >= TARGET_RATIO and errors == 0,
        "mixed": mixed,  # scoring while trainings run (None without --mixed-trainings)
    }


def warm_pairs(
    database: str,
    args: argparse.Namespace,
    service: Service,
    keys: list[str],
    handle: str,
    unlimited: Service,
    off_keys: list[str],
    off_handle: str,
    texts: list[str],
) -> tuple[LoadResult, LoadResult]:
    """The warm phase, `--warm-pairs` times limits off then on (each a share of `--requests` and
    `--duration`), merged per configuration: the machine's drift falls on both alike."""
    n, pairs = args.clients, args.warm_pairs
    print(f"[{database}] limits off: caching the warm texts (not timed) ...", flush=True)
    asyncio.run(drive(unlimited.base_urls, off_keys, off_handle, texts, n, len(texts), args.duration))
    print(
        f"[{database}] warm: {pairs} × (limits off, on), {args.requests} requests / {args.duration:.0f}s "
        "each",
        flush=True,
    )
    on: list[LoadResult] = []
    off: list[LoadResult] = []
    for _ in range(pairs):
        for svc, ks, h, into in ((unlimited, off_keys, off_handle, off), (service, keys, handle, on)):
            into.append(
                asyncio.run(
                    drive(
                        svc.base_urls,
                        ks,
                        h,
                        texts,
                        n,
                        args.requests // pairs,
                        args.duration / pairs,
                        warmup=False,
                        cpu_probe=svc.cpu_seconds,
                    )
                )
            )
    return merged(on), merged(off)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.load",
        description="Load on the score endpoint: the service against the in-process engine (the package's "
        "docstring, benchmarks/load/__init__.py, says how).",
    )
    p.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--requests", type=int, default=2000, help="warm phase: stop after this many requests")
    p.add_argument("--duration", type=float, default=120.0, help="... or this many seconds (per phase)")
    p.add_argument("--texts", type=int, default=1000, help="new texts a round (each cold round)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of engine, service cold, engine")
    p.add_argument(
        "--api-processes",
        type=int,
        default=os.cpu_count() or 1,
        help="API processes, clients spread over them (default: one per core)",
    )
    p.add_argument(
        "--keys",
        type=int,
        default=64,
        help="scoring keys the load is sent with in turn: enough that none exceeds the default rate limit",
    )
    p.add_argument(
        "--warm-pairs", type=int, default=2, help="warm phase: turns of (limits off, default limits)"
    )
    p.add_argument("--embedder", default="auto", help="what a new model gets by default: auto (the blend)")
    p.add_argument("--model", default=None, help="a demo model of sample_data/ (default: the first by name)")
    p.add_argument("--effort", default="low", help="training effort (does not affect scoring cost)")
    p.add_argument("--start-timeout", type=float, default=180.0)
    p.add_argument("--train-timeout", type=float, default=900.0)
    p.add_argument(
        "--mixed-trainings",
        type=int,
        default=10,
        help="mixed round: trainings run while the clients score (0: no mixed round)",
    )
    p.add_argument("--mixed-effort", default="medium", help="the mixed round's training effort")
    p.add_argument(
        "--worker",
        choices=("child", "in-process"),
        default="child",
        help="where the first API process runs background runs: its worker child process (serve's "
        "default) or a thread of its own (serve --in-process-worker, the former shape)",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    return p.parse_args(argv)


def exit_on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C: the `with` blocks stop the service processes and the PostgreSQL cluster
    (Python's default SIGTERM action exits at once, leaving them running)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    model = read_demo_model(args.model or demo_slugs()[0])
    sets = args.rounds + (1 if args.mixed_trainings else 0)  # the mixed round scores new texts too
    texts = score_texts(model, args.texts * sets)
    if len(texts) < args.texts * sets:
        raise SystemExit(
            f"only {len(texts)} distinct texts for {sets} rounds of {args.texts}: fewer --texts, or the "
            "datasets beside the checkout (../shared/datasets, or SCORING_DATASETS) for more"
        )
    text_sets = [texts[i : i + args.texts] for i in range(0, len(texts), args.texts)]
    mixed_texts = text_sets.pop() if args.mixed_trainings else None
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    runs = [run_one(db, args, model, text_sets, mixed_texts) for db in databases]
    report.write(runs, args.out, args.worker)
    print()
    print(markdown(runs))
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    met = [
        r["target_met"] and r["limits_cost"]["target_met"] and (r["mixed"] or {}).get("target_met", True)
        for r in runs
    ]
    return 0 if all(met) else 1
