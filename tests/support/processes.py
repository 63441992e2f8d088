"""The fixtures of a test that starts a process of its own; each marks the test (tests/support/markers.py),
and the fast lane leaves both out.

`server_process`: a service process of its own, directly or through what it runs (a notebook, a benchmark, a
documented example, an operator's command); marks it `server`. A service process the test leaves running is
ended when the test ends, so a failed test does not leave a server behind for the rest of the run.

`fresh_python` and `run_program`: run Python code in a new interpreter, or any program (make's steps, docker
compose, a pytest of its own), for what only a process of its own shows (what an import loads, what another
process computes, what a command line does); they mark it `process`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import psutil
import pytest

from harness.processes import children


def _services(pids: set[int]) -> list[psutil.Process]:
    """The `python -m service …` processes among `pids` (the service, its workers; not a database server)."""
    found = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            words = process.cmdline()
        except psutil.Error:
            continue  # exited meanwhile
        if any(a == "-m" and b == "service" for a, b in zip(words, words[1:], strict=False)):
            found.append(process)
    return found


@pytest.fixture
def server_process() -> Iterator[None]:
    before = set(children(os.getpid(), recursive=True))
    yield
    left = _services(set(children(os.getpid(), recursive=True)) - before)
    for process in left:
        process.terminate()
    _, alive = psutil.wait_procs(left, timeout=20)
    for process in alive:
        process.kill()


ROOT = Path(__file__).resolve().parents[2]


class FreshPython(Protocol):
    def __call__(
        self,
        code: str,
        *,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]: ...


class RunProgram(Protocol):
    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]: ...


def _run_program(
    argv: Sequence[str],
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """`argv` run in `cwd` (`env`: its whole environment, else the test's); with `check`, an exit other than
    0 fails the test with what the process wrote."""
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, input=input, capture_output=True, text=True, timeout=120
    )
    if check:
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return done


def _run_python(
    code: str,
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """`code` run by this environment's interpreter, from the checkout unless `cwd` says otherwise."""
    return _run_program([sys.executable, "-c", code], cwd=cwd, env=env, input=input, check=check)


@pytest.fixture
def fresh_python() -> FreshPython:
    return _run_python


@pytest.fixture
def run_program() -> RunProgram:
    return _run_program
