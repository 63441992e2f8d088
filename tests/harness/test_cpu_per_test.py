"""harness.cpu_per_test counts a test's own CPU, its children's, and nothing of a test that only waits."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from harness.cpu_per_test import main
from tests.support.processes import ROOT, RunProgram

BURN = 0.6  # CPU seconds each burning test spends

SUITE = f"""
import subprocess, sys, time

BURN = "import time\\nwhile time.process_time() < {BURN}: pass"
WAIT_IN_CHILD = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {{BURN!r}}])"
BACKGROUND = []

def test_burns_in_its_own_process():
    start = time.process_time()
    while time.process_time() - start < {BURN}:
        pass

def test_burns_in_a_child():
    subprocess.run([sys.executable, "-c", BURN], check=True)

def test_burns_in_a_grandchild():
    subprocess.run([sys.executable, "-c", WAIT_IN_CHILD], check=True)

def test_leaves_a_burner_running():
    # Burns, says so, then idles until the next test stops it: a fixture's server does that.
    code = BURN + "\\nprint('burned', flush=True)\\ntime.sleep(60)"
    BACKGROUND.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True))
    assert BACKGROUND[0].stdout.readline() == "burned\\n"

def test_stops_the_burner():
    BACKGROUND[0].kill()
    BACKGROUND[0].wait()

def test_only_waits():
    time.sleep({BURN})
"""
IDLE = {"test_stops_the_burner", "test_only_waits"}


def test_each_test_gets_the_cpu_of_its_process_tree(tmp_path: Path, run_program: RunProgram) -> None:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(SUITE))
    out = tmp_path / "cpu"
    run_program(
        [sys.executable, "-m", "pytest", "-q", "-p", "harness.cpu_per_test", "--cpu-dir", str(out),
         "-p", "no:cacheprovider", "-p", "no:randomly", "test_suite.py"],
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    rows = [json.loads(line) for line in (out / "main.jsonl").read_text().splitlines()]
    cpu = {row["test"].split("::")[1]: row["cpu_s"] for row in rows}
    assert len(cpu) == 6
    for name, seconds in cpu.items():
        if name in IDLE:  # the burner's CPU was its starter's, not again its stopper's
            assert seconds < BURN / 3, (name, seconds)
        else:  # the burn, and a little more for starting interpreters; never another test's. A live
            # process's CPU is read in clock ticks (10 ms), so the burner still running may show a tick less.
            assert BURN - 0.02 <= seconds < 3 * BURN, (name, seconds)
    assert all(row["wall_s"] > 0 for row in rows)


def test_the_summary_adds_up_each_file(tmp_path: Path, capsys: object) -> None:
    rows = [
        {"test": "tests/a.py::t1", "cpu_s": 1.5, "wall_s": 2.0},
        {"test": "tests/b.py::t1", "cpu_s": 4.0, "wall_s": 4.5},
        {"test": "tests/a.py::t2[x]", "cpu_s": 2.0, "wall_s": 1.0},
    ]
    (tmp_path / "gw0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    (tmp_path / "gw1.jsonl").write_text(json.dumps(rows[2]) + "\n")
    assert main([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "8 s of CPU in 3 tests of 2 files"
    assert lines[2].split() == ["4.0", "4.5", "1", "tests/b.py"]
    assert lines[3].split() == ["3.5", "3.0", "2", "tests/a.py"]
