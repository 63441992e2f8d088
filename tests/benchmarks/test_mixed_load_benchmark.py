"""The mixed-client load script end to end on a short run (hashing embedder, SQLite): every operation kind is
answered as documented (0 errors: no 5xx, no 503, no dropped connection) and hostile requests change nothing.
No speed figure is asserted; the 50-client, 30-second figures are in docs/benchmarks/speed.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import mixed_load

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_a_short_mixed_run_has_no_errors(tmp_path: Path) -> None:
    out = tmp_path / "mixed.json"
    args = [
        "--database",
        "sqlite",
        "--embedder",
        "hashing",
        "--clients",
        "12",
        "--duration",
        "6",
        "--out",
        str(out),
    ]
    assert mixed_load.main(args) == 0
    (run,) = json.loads(out.read_text())["runs"]
    assert run["errors"] == 0 and run["first_errors"] == [], run["first_errors"]
    assert run["shared_model_unchanged_by_hostile"] is True
    kinds = set(run["operations"])
    assert {"score", "score batch", "compare", "add samples", "tag", "untag", "pool import"} <= kinds, kinds
    assert any(k in kinds for k in ("other namespace write", "scoring key write", "no key", "forged cursor"))
    assert sum(op["requests"] for op in run["operations"].values()) == run["requests"] > 50
