"""The scoring-beside-work benchmark end to end on a tiny run (hashing embedder, no graph build): the score
requests are answered (200) idle and beside a training in the worker child. No speed figure is asserted; the
figures with the default embedder and a graph build beside are in docs/benchmarks/speed.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import score_beside_work

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_tiny_run_scores_beside_a_training(tmp_path: Path) -> None:
    out = tmp_path / "beside.json"
    args = ["--embedder", "hashing", "--texts", "10", "--build", "none", "--repeats", "1", "--effort", "low"]
    assert score_beside_work.main([*args, "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["texts"] == 10 and len(result["beside"]) == 1
    assert result["beside"][0]["status"] == 200
