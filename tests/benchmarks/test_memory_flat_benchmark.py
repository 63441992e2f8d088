"""The memory benchmark's machinery end to end on a tiny run (the hashing embedder, the demo texts): every
phase is sampled in both processes and nothing is killed or logged as a problem. No figure is asserted; they
are in docs/benchmarks/memory.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import memory_flat

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_tiny_run_samples_every_phase_of_both_sizes(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    args = ["--embedders", "hashing", "--corpus", "demo", "--texts", "3", "--scale", "2", "--chars", "3000"]
    assert memory_flat.main([*args, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [size["texts_per_model"] for size in result["sizes"]] == [3, 6]
    for size in result["sizes"]:
        assert set(size["phases"]) >= {"bodies", "import", "suggest", "train"}
        assert size["api_peak_mb"] > 0 and size["worker_peak_mb"] > 0
        assert size["killed_in"] is None and size["log_problems"] == []
