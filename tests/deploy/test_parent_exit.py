"""Processes that stop with their parent: `worker --parent-pid` when the parent is SIGKILLed, and the load
benchmark, which on SIGTERM stops its service processes and its PostgreSQL cluster before exiting."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from harness import processes
from harness.waiting import wait_until
from tests.support.deploy import REPO, clean_env

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

PARENT = """
import subprocess, sys, time
from pathlib import Path
log = Path(sys.argv[1])
worker = subprocess.Popen(
    [sys.executable, "-m", "service", "worker", "--parent-pid", str(__import__("os").getpid())],
    stdout=log.open("wb"), stderr=subprocess.STDOUT,
)
print(worker.pid, flush=True)
time.sleep(600)
"""


def cmdline(pid: int) -> str:
    try:
        return " ".join(processes.cmdline(pid))
    except psutil.Error:
        return ""


def test_worker_stops_when_its_parent_is_killed(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    env = clean_env(SCORING_DATA_DIR=str(tmp_path / "data"))
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(log)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    worker_pid = None
    try:
        assert parent.stdout is not None
        worker_pid = int(parent.stdout.readline())
        wait_until(lambda: "Scoring worker ready" in log.read_text(), 120, "the worker to be ready", 0.2)
        parent.send_signal(signal.SIGKILL)  # no chance to stop its child: only --parent-pid can
        parent.wait()
        wait_until(lambda: not processes.alive(worker_pid), 30, "the worker to exit", 0.2)
        text = log.read_text()
        assert "parent process" in text and "is gone; stopping" in text
        assert "worker stopped" in text  # the graceful path: consumers stopped, runs handed back
    finally:
        parent.kill()
        parent.communicate()  # waits, and closes the pipe (left open, it warns when collected)
        if worker_pid is not None and processes.alive(worker_pid):
            os.kill(worker_pid, signal.SIGKILL)


@pytest.fixture
def short_tmpdir() -> Iterator[Path]:
    """A TMPDIR of its own: everything the benchmark creates lands (and must be gone) there. Short and
    world-traversable, as the PostgreSQL server runs as another user under root."""
    path = Path(tempfile.mkdtemp(prefix="ldt-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.postgres
def test_load_benchmark_cleans_up_on_sigterm(short_tmpdir: Path, tmp_path: Path) -> None:
    env = clean_env(TMPDIR=str(short_tmpdir))
    args = [
        "--database",
        "postgres",
        "--embedder",
        "hashing",
        "--api-processes",
        "1",
        # Runs in a thread of the API process, not a worker child: two process starts fewer, and a worker's
        # end with its parent is test_worker_stops_when_its_parent_is_killed's.
        "--worker",
        "in-process",
        "--clients",
        "2",
        "--texts",
        "12",
        "--rounds",
        "1",
        "--requests",
        "100000000",
        "--duration",
        "600",
        "--out",
        str(tmp_path / "load.json"),
    ]
    bench = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.load", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    try:
        assert bench.stdout is not None
        for line in bench.stdout:  # the warm phase lasts 600 s: SIGTERM lands mid-load
            output.append(line)
            if "warm:" in line:
                break
        assert any("warm:" in line for line in output), "".join(output)
        children = processes.mentioning(str(short_tmpdir))
        postmasters = [p for p in children if "postgres -D" in cmdline(p)]
        servers = [p for p in children if "-m service serve" in cmdline(p)]
        # Two fleets side by side (default rate limits, and none), each the embedded setup: one API process.
        assert len(servers) == 2 and postmasters, children

        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) == 128 + signal.SIGTERM
        wait_until(
            lambda: not processes.mentioning(str(short_tmpdir)), 30, "the benchmark's processes to exit"
        )
        assert not any(short_tmpdir.iterdir()), list(short_tmpdir.iterdir())  # cluster and data dirs removed
        assert not (tmp_path / "load.json").exists()
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
        for pid in processes.mentioning(str(short_tmpdir)):  # by PID, only what this test started
            os.kill(pid, signal.SIGKILL)
        if bench.stdout is not None:  # not read to its end: left open, it would warn when collected
            bench.stdout.close()
