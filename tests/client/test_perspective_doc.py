"""docs/perspective.md's migration example (logged scores → model → same request) runs as written."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

ROOT = Path(__file__).resolve().parents[2]


def test_migration_example_runs(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "perspective.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert len(blocks) == 1
    env = {
        **os.environ,
        "SCORING_DATA_DIR": str(tmp_path),  # start_local_service's default data dir
        "SCORING_EMBEDDER": "hashing",  # the service's embedder when none is passed; MiniLM is slow here
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    agreement, same_rate, spans, suggested = done.stdout.strip().splitlines()
    assert agreement == "TOXICITY True True" and same_rate == "True"
    assert ast.literal_eval(spans) == [(0, 31), (32, 56)]
    assert ast.literal_eval(suggested) == {}
