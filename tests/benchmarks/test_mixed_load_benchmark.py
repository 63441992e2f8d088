"""The mixed-client load script end to end on a short run (hashing embedder, SQLite): every operation kind is
answered as documented (0 errors: no 5xx, no 503, no dropped connection) and hostile requests change nothing.
No speed figure is asserted; the 50-client, 30-second figures are in docs/benchmarks/speed.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import mixed_load

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

HOSTILE = {
    "other namespace write",
    "scoring key write",
    "no key",
    "forged cursor",
    "broken JSON",
    "feedback, other key",
}


def test_a_short_mixed_run_has_no_errors(tmp_path: Path) -> None:
    out = tmp_path / "mixed.json"
    # 4 clients share out every kind of operation once before drawing at random (whatever the machine's
    # speed), then draw for 1 s: the benchmark's 50 clients for 30 s repeat the same requests.
    args = ["--database", "sqlite", "--embedder", "hashing", "--clients", "4", "--duration", "1"]
    assert mixed_load.main([*args, "--out", str(out)]) == 0
    (run,) = json.loads(out.read_text())["runs"]
    assert run["errors"] == 0 and run["first_errors"] == [], run["first_errors"]
    assert run["shared_model_unchanged_by_hostile"] is True
    kinds = set(run["operations"])
    assert {"score", "score batch", "compare", "add samples", "tag", "untag", "pool import"} <= kinds, kinds
    assert kinds & HOSTILE, kinds  # one hostile request at least, of a kind its seed draws
    assert sum(op["requests"] for op in run["operations"].values()) == run["requests"] >= len(mixed_load.MIX)
