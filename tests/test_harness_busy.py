"""`python -m harness.busy`: a command runs beside CPU-bound processes, which are gone once it ends."""

from __future__ import annotations

import subprocess
import sys

import psutil


def test_runs_the_command_beside_spinners_and_returns_its_status() -> None:
    # The command counts the spinners (this run's children other than itself) and exits with that count.
    count = (
        "import os, psutil; me = psutil.Process(); parent = me.parent();"
        "raise SystemExit(sum(1 for c in parent.children() if c.pid != me.pid and c.status() != 'zombie'))"
    )
    run = subprocess.run(
        [sys.executable, "-m", "harness.busy", "--procs", "2", "--", sys.executable, "-c", count],
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 2, run.stderr
    assert not [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]


def test_refuses_a_missing_command() -> None:
    run = subprocess.run([sys.executable, "-m", "harness.busy"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "give the command" in run.stderr
