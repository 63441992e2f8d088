"""The scale benchmark end to end on small sizes (SQLite, the hashing embedder, the demo models' texts: no
dataset beside the checkout is needed): its parts run, their figures are there, and the service's logs hold
no lock error. No speed figure is asserted; the figures are in docs/benchmarks/scale.md ("Scale")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import scale

pytestmark = pytest.mark.usefixtures("server_process")  # starts API and worker processes


def run(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "result.json"
    options = ["--database", "sqlite", "--embedder", "hashing", "--corpus", "demo", "--output", str(out)]
    assert scale.main([*args, *options]) == 0
    return json.loads(out.read_text())["sqlite"]


def test_imports_report_each_size(tmp_path: Path) -> None:
    # Each rate is that of 1,000 more (2 batches of samples and of evaluation items, 1 of pool texts; the
    # benchmark's own 5,000 take five times the CPU for the same path) once the model holds the size, or
    # more when the last size's measurement went past it: the second sizes are that case (the first size's
    # rate texts already reach them), so every size after the first costs its 1,000 rate texts only.
    args = ("--sizes", "1000,2000", "--pool-sizes", "1000,1500", "--rate-texts", "1000")
    result = run(tmp_path, "imports", *args)
    assert [r["samples"] for r in result["samples"]] == [1000, 2000]
    assert all(r["rate_per_s"] > 0 and r["training_s"] > 0 for r in result["samples"])
    assert [r["texts"] for r in result["pool"]] == [1000, 2000]
    assert [r["items"] for r in result["evaluation_items"]] == [1000, 2000]
    assert result["lock_probe"]["probes"] > 0
    assert result["log_problems"] == []


def test_a_training_is_shared_by_two_workers(tmp_path: Path) -> None:
    """200 texts are two shards of 100 for two workers; the training ends clean, at most its two shards
    handed out by message. Shards of 100, not the service's 5,000: the same sharded path on a few of the
    samples to post and embed. Two workers only: a one-worker run is the benchmark's figure to divide by."""
    result = run(tmp_path, "speedup", "--samples", "200", "--shard-texts", "100", "--worker-counts", "2")
    [two] = result["trainings"]
    assert two["workers"] == 2 and sum(two["shards_taken_by_message"]) <= 2
    assert two["log_problems"] == []


def test_a_short_mixed_run_is_clean(tmp_path: Path) -> None:
    # No load time, one client of each kind: each makes its first pass whatever the time (one training, for
    # the trainer), all at once; a longer run repeats the same requests.
    clients = ("--importers", "1", "--trainers", "1", "--scorers", "1")
    result = run(tmp_path, "mixed", "--minutes", "0", "--workers", "1", *clients)
    assert result["errors"] == 0, result["first_errors"]
    assert {"import", "train", "score"} <= set(result["requests"])
    assert result["log_problems"] == []
