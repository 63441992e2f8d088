"""`python -m harness.busy`: a command runs beside CPU-bound processes, which are gone once it ends."""

from __future__ import annotations

import sys

import psutil

from tests.support.processes import RunProgram

# The command: the spinners are its parent's other children; it prints their pids and exits with their count.
COUNT = (
    "import psutil; me = psutil.Process();"
    "others = [c.pid for c in me.parent().children() if c.pid != me.pid];"
    "print(*others); raise SystemExit(len(others))"
)


def test_runs_the_command_beside_spinners_and_returns_its_status(run_program: RunProgram) -> None:
    run = run_program(
        [sys.executable, "-m", "harness.busy", "--procs", "2", "--", sys.executable, "-c", COUNT], check=False
    )
    assert run.returncode == 2, run.stderr
    spinners = [int(pid) for pid in run.stdout.split()]
    assert len(spinners) == 2
    assert not [pid for pid in spinners if psutil.pid_exists(pid)]  # stopped once the command ended


def test_refuses_a_missing_command(run_program: RunProgram) -> None:
    run = run_program([sys.executable, "-m", "harness.busy"], check=False)
    assert run.returncode == 2
    assert "give the command" in run.stderr
