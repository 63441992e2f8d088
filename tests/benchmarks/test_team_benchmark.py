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
    # The run ends at 30 labels and once some were posted after the owner's training (at 10) started, however
    # long they take or however fast they come (--duration only bounds it).
    # A pool of 100: 90 texts to label (the first 10 are the seed samples), three times the 30 labels.
    args = ["--annotators", "3", "--duration", "300", "--labels", "30", "--pool", "100", "--k", "5"]
    args += ["--think", "0.05", "--train-at", "10", "--scale", "5", "--out", str(out)]
    # A gold rate above the benchmark's 0.1, so that the few suggestions of 30 labels surely hold gold items.
    status = team.main([*args, "--gold-rate", "0.3"])
    run = json.loads(out.read_text())
    assert run["labels_posted"] >= 30 and run["suggestions"] > 0 and run["error_count"] == 0, run
    assert run["collisions"] == 0 and run["lost"] == 0 and run["mismatched"] == 0 and status == 0
    assert run["refusals"] == 0 and run["gold_answers"] > 0 and run["gold_as_votes"] == 0
    assert run["stored_as"].get("feedback", 0) > 0  # the owner's training happened while they labelled


def test_a_short_flood_is_refused_429_while_the_people_meet_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Counted, not timed, so the outcome does not hang on the machine's speed: the run ends once the two
    # people have posted 6 labels and the script was refused once (--duration only bounds it). A person
    # then sends at most 7 writes (6 + one in flight), under the burst of 10 however slowly; the script
    # passes 10 + 0.1 a second after a dozen writes, unless one of its requests takes 10 s. The people
    # think briefly: the script floods for as long as they label, each of its requests CPU for both sides.
    monkeypatch.setenv("SCORING_WRITE_BURST", "10")
    monkeypatch.setenv("SCORING_WRITE_RATE_PER_S", "0.1")
    out = tmp_path / "team-flood.json"
    args = ["--annotators", "3", "--duration", "300", "--labels", "6", "--pool", "100", "--k", "5"]
    status = team.main([*args, "--think", "0.05", "--train-at", "1000", "--flood", "--out", str(out)])
    run = json.loads(out.read_text())
    assert run["flood"]["statuses"].get("429", 0) > 0 and run["rate_limited"] == 0, run
    assert run["labels_posted"] >= 6 and run["lost"] == 0 and status == 0
