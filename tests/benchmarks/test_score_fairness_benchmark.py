"""The scoring fairness script end to end on a short run (hashing embedder, one arm): a caller alone meets
no 429, every request in flight at SIGTERM is answered in the envelope, and the process is gone within the
grace and 10 s. No speed figure is asserted; the MiniLM figures are in docs/benchmarks/speed.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import score_fairness

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_short_fairness_run_answers_everyone(tmp_path: Path) -> None:
    out = tmp_path / "fairness.json"
    # Half a second a phase, the loads not led in, one request of 100 lone texts: every phase and the stop
    # run; the colleague's first request is sent whatever the time, so each phase has a round trip.
    args = ["--embedder", "hashing", "--seconds", "0.5", "--lead", "0", "--lone-texts", "100"]
    score_fairness.main([*args, "--arms", "fair", "--out", str(out)])
    result = json.loads(out.read_text())
    (run,) = result["runs"]
    assert run["lone"]["429s"] == 0 and run["lone"]["texts_per_s"] > 0
    assert run["quiet_p50_ms"] > 0 and run["tiny_p50_ms"] > 0 and run["long_p50_ms"] > 0
    assert run["unanswered"] == 0 and run["exit_code"] == 0, run["long_load_answers"]
    assert set(run["long_load_answers"]) <= {"200", "503 shutting_down", "not accepted"}
    assert result["targets_met"]["no 429 alone"] and result["targets_met"]["stop"]
