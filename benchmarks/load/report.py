"""The load benchmark's report: a markdown table, and the JSON file that keeps every setup's latest run."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TARGET_RATIO = 0.8  # the service's cold requests a second over the engine's texts a second, at least
#: The default rate limits' cost on warm scoring, against every limit off: throughput at least, p99 at most.
LIMITS_THROUGHPUT = 0.95
LIMITS_P99 = 1.3


def median_of(rounds: Sequence[dict[str, Any]], key: str) -> float:
    return statistics.median(x["service"][key] for x in rounds)


def markdown(runs: Sequence[dict[str, Any]]) -> str:
    head = (
        "| database | cache | API procs | clients | requests | errors | req/s | p50 ms | p99 ms "
        "| engine 1 text/call (texts/s) | ratio | CPU ratio | target |"
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in runs:
        rounds = r["rounds"]
        engine = statistics.median(statistics.mean(x["engine_single_tps"]) for x in rounds)
        span = ", ".join(f"{x['ratio']:.2f}" for x in rounds)
        rows.append(
            f"| {r['database']} | cold, median of {len(rounds)} | {r['api_processes']} | {r['clients']} "
            f"| {sum(x['service']['requests'] for x in rounds)} "
            f"| {sum(x['service']['errors'] for x in rounds)} | {median_of(rounds, 'throughput_rps'):.1f} "
            f"| {median_of(rounds, 'p50_ms'):.1f} | {median_of(rounds, 'p99_ms'):.1f} | {engine:.1f} "
            f"| {r['ratio_cold_vs_engine_single']:.2f}x ({span}) "
            f"| {r['cpu_ratio_cold_vs_engine_single']:.2f}x "
            f"| {'met' if r['target_met'] else 'MISSED'} |"
        )
        w = r["service_warm"]
        rows.append(
            f"| {r['database']} | warm | {r['api_processes']} | {r['clients']} | {w['requests']} "
            f"| {w['errors']} | {w['throughput_rps']:.1f} | {w['p50_ms']:.1f} | {w['p99_ms']:.1f} "
            f"| {r['engine_extras']['single_warm_tps']:.1f} | {r['ratio_warm_vs_engine_single_warm']:.2f}x "
            "| | |"
        )
    rows += [
        "",
        "| database | API procs | clients | keys | rate limits | requests | errors | req/s | p50 ms | p99 ms "
        "| vs off: req/s, p99 | target |",
        "|" + "---|" * 12,
    ]
    for r in runs:
        cost = r["limits_cost"]
        for name, w in (("default", r["service_warm"]), ("off", r["service_warm_limits_off"])):
            versus = (
                f"{cost['throughput_vs_off']:.3f}×, {cost['p99_vs_off']:.2f}×" if name == "default" else ""
            )
            met = ("met" if cost["target_met"] else "MISSED") if name == "default" else ""
            rows.append(
                f"| {r['database']} | {r['api_processes']} | {r['clients']} | {r['keys']} | {name} "
                f"| {w['requests']} | {w['errors']} | {w['throughput_rps']:.1f} | {w['p50_ms']:.1f} "
                f"| {w['p99_ms']:.1f} | {versus} | {met} |"
            )
    mixed = [r for r in runs if r.get("mixed")]
    if mixed:
        rows += [
            "",
            "| database | API procs | worker | trainings | requests | errors | idle p50 / p99 ms "
            "| p50 ms (× idle) | p99 ms (× idle) | queue wait mean s | run mean s | pickup mean s "
            "| target |",
            "|" + "---|" * 13,
        ]
    for r in mixed:
        m, s = r["mixed"], r["mixed"]["service"]
        rows.append(
            f"| {r['database']} | {r['api_processes']} | {m['worker']} | {m['trainings']} | {s['requests']} "
            f"| {s['errors']} "
            f"| {m['idle']['adjacent_pass']['p50_ms']:.0f} / {m['idle']['adjacent_pass']['p99_ms']:.0f} "
            f"| {s['p50_ms']:.0f} ({m['p50_vs_idle']}×) | {s['p99_ms']:.0f} ({m['p99_vs_idle']}×) "
            f"| {m['queue_wait_mean_s']} | {m['run_duration_mean_s']} | {m['pickup_mean_s']} "
            f"| {'met' if m['target_met'] else 'MISSED'} |"
        )
    return "\n".join(rows)


def write(runs: Sequence[dict[str, Any]], out: Path, worker: str) -> None:
    """Merge `runs` into `out` under their setup's name (database, API processes, worker), keeping the other
    setups' latest runs, with the machine they ran on."""
    report: dict[str, Any] = {}
    if out.exists():
        with contextlib.suppress(ValueError):
            report = json.loads(out.read_text())
    report.setdefault("runs", {})
    shape = "-in-process-worker" if worker == "in-process" else ""
    report["runs"].update({f"{r['database']}-{r['api_processes']}p{shape}": r for r in runs})
    report["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    report["target_ratio"] = TARGET_RATIO
    report["limits_targets"] = {"throughput_vs_off": LIMITS_THROUGHPUT, "p99_vs_off": LIMITS_P99}
    report["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
