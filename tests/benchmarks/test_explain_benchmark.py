"""The explanation benchmark on a tiny run (hashing embedder, a few ConvAbuse turns): every cell is reported,
with shares that are shares and the floor the engine uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import explain
from core.engine.explain import NOISE_FLOOR
from harness.datasets import find_datasets


@pytest.mark.skipif(find_datasets() is None, reason="the labelled datasets (../shared/datasets) are absent")
def test_a_tiny_run_reports_every_cell(tmp_path: Path) -> None:
    out = tmp_path / "explain.json"
    args = ["--embedders", "hashing", "--datasets", "abuse", "--sizes", "0", "8", "--texts", "4"]
    assert explain.main([*args, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["noise_floor"] == NOISE_FLOOR
    rows = result["rows"]
    assert [(r["dataset"], r["embedder"], r["per_pole"], r["texts"]) for r in rows] == [
        ("abuse", "hashing", 0, 4),
        ("abuse", "hashing", 8, 4),
    ]
    for row in rows:
        assert row["words"] >= 16 and row["noise"] > 0
        assert row["function_p90_logit"] == pytest.approx(row["k"] * row["function_p90_axis"], abs=2e-3)
        shares = [row[k] for k in ("function_coloured", "coloured", "coloured_axis_floor")]
        assert all(0.0 <= s <= 1.0 for s in shares)
        assert row["confident_words"] <= row["words"]
