"""Running `python -m service …` commands as an operator would, in a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def clean_env(**scoring: str) -> dict[str, str]:
    """This environment without SCORING_*/PG* variables, plus `scoring`, with this worktree's code first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "PG"))}
    env.update({"PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", "SCORING_EMBEDDER": "hashing", **scoring})
    return env


def service(*args: str, env: dict[str, str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
