"""The faithfulness benchmark on a tiny run (hashing embedder, a few confident ConvAbuse turns): both methods
reported, with measures that are what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import explain_faithfulness
from harness.datasets import find_datasets


@pytest.mark.skipif(find_datasets() is None, reason="the labelled datasets (../shared/datasets) are absent")
def test_a_tiny_run_reports_both_methods(tmp_path: Path) -> None:
    out = tmp_path / "faithfulness.json"
    args = ["--dataset", "abuse", "--embedder", "hashing", "--train", "300", "--texts", "4"]
    assert explain_faithfulness.main([*args, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["texts"] == 4 and result["k"] == 3
    for method in ("owen", "leave_one_out"):
        row = result[method]
        assert 0 <= row["highlighted"] <= result["texts"]
        assert -1.0 <= row["comprehensiveness"] <= 1.0 and row["comprehensiveness_random"] > 0
        assert row["ratio"] == pytest.approx(
            row["comprehensiveness"] / row["comprehensiveness_random"], abs=0.01
        )
        assert row["seconds_30_words"] > 0
