"""The memory benchmark's machinery end to end on a tiny run (the hashing embedder, the demo texts): every
phase is sampled in both processes and nothing is killed or logged as a problem. No figure is asserted; they
are in docs/benchmarks/memory.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import memory_flat

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_tiny_run_samples_every_phase(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    # One size (--scale 1): a second size runs the same steps on a fresh service again, a service's start
    # and two trainings more for no other code.
    args = ["--embedders", "hashing", "--corpus", "demo", "--texts", "3", "--scale", "1", "--chars", "3000"]
    assert memory_flat.main([*args, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    [size] = result["sizes"]
    assert size["texts_per_model"] == 3 and size["stored_chars"] == 2 * 3 * 3000
    assert set(size["phases"]) >= {"bodies", "import", "suggest", "train"}
    assert size["api_peak_mb"] > 0 and size["worker_peak_mb"] > 0
    assert size["killed_in"] is None and size["log_problems"] == []
