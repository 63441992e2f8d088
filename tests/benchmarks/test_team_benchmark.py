"""The team benchmark end to end for a few seconds: three annotators with named keys label one model through
a real local service; no two are handed the same text and every label answered 2xx is stored (on a rating
scale with the point pressed; a gold item's as its person's answer). The flood run labels by the poles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import team

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_short_team_run_on_a_scale_with_gold_has_no_collision_and_loses_no_label(tmp_path: Path) -> None:
    out = tmp_path / "team.json"
    args = ["--annotators", "3", "--duration", "8", "--pool", "300", "--k", "5", "--think", "0.05"]
    # A gold rate above the benchmark's 0.1, so that the few suggestions of 8 s surely hold gold items.
    status = team.main([*args, "--train-at", "10", "--scale", "5", "--gold-rate", "0.3", "--out", str(out)])
    run = json.loads(out.read_text())
    assert run["labels_posted"] > 10 and run["suggestions"] > 0 and run["error_count"] == 0, run
    assert run["collisions"] == 0 and run["lost"] == 0 and run["mismatched"] == 0 and status == 0
    assert run["refusals"] == 0 and run["gold_answers"] > 0 and run["gold_as_votes"] == 0
    assert run["stored_as"].get("feedback", 0) > 0  # the owner's training happened while they labelled


def test_a_short_flood_is_refused_429_while_the_people_meet_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small bucket, so that the outcome does not hang on the machine's speed: people labelling a text a
    # second send at most 8 writes in the 6 s (never past 10 + 1 a second), the script far more.
    monkeypatch.setenv("SCORING_WRITE_BURST", "10")
    monkeypatch.setenv("SCORING_WRITE_RATE_PER_S", "1")
    out = tmp_path / "team-flood.json"
    args = ["--annotators", "3", "--duration", "6", "--pool", "200", "--k", "5", "--think", "1.0"]
    status = team.main([*args, "--train-at", "1000", "--flood", "--out", str(out)])
    run = json.loads(out.read_text())
    assert run["flood"]["statuses"].get("429", 0) > 0 and run["rate_limited"] == 0, run
    assert run["labels_posted"] > 0 and run["lost"] == 0 and status == 0
