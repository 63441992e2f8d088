"""The load benchmark's machinery end to end on a tiny run (hashing embedder): no figures are asserted,
only that every request is answered and the report is complete, so the script cannot rot unnoticed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import load

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_tiny_load_run_reports_every_round(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    args = [
        "--database",
        "sqlite",
        "--embedder",
        "hashing",
        "--api-processes",
        "1",  # more (its default: one a core) only spread the same clients over more ports
        "--clients",
        "4",
        "--texts",
        "24",
        "--rounds",
        "2",
        "--requests",
        "40",
        "--mixed-trainings",
        "2",
        "--mixed-effort",
        "low",
        "--out",
        str(out),
    ]
    load.main(args)  # exit status says whether the target was met: not a question for a test
    run = json.loads(out.read_text())["runs"]["sqlite-1p"]
    assert run["errors"] == 0 and run["api_processes"] == 1 and run["embedder"].startswith("hashing")
    assert [r["service"]["requests"] for r in run["rounds"]] == [24, 24]
    assert all(r["service"]["errors"] == 0 and r["ratio"] > 0 for r in run["rounds"])
    assert all(len(r["engine_single_tps"]) == 2 for r in run["rounds"])
    # Warm: the default limits (the load's keys in turn, none past its limit) beside every limit off.
    for warm in (run["service_warm"], run["service_warm_limits_off"]):
        assert warm["requests"] == 40 and warm["errors"] == 0
    assert run["keys"] == 64 and run["limits_cost"]["throughput_vs_off"] > 0
    assert run["target_met"] == (run["ratio_cold_vs_engine_single"] >= load.TARGET_RATIO)

    # The mixed round: an idle pass, then the clients score while both trainings run in the worker child.
    mixed = run["mixed"]
    assert mixed["worker"] == "child" and mixed["trainings"] == 2 and mixed["failed_trainings"] == 0
    assert mixed["idle"]["adjacent_pass"]["requests"] == 24 and mixed["idle"]["adjacent_pass"]["errors"] == 0
    assert mixed["service"]["requests"] > 0 and mixed["service"]["errors"] == 0
    assert len(mixed["runs"]) == 2
    for r in mixed["runs"]:
        assert r["wait_s"] >= 0 and r["duration_s"] > 0 and 0 <= r["pickup_s"] <= r["wait_s"]
    assert mixed["p99_vs_idle"] > 0 and mixed["queue_wait_mean_s"] is not None
