"""`server_process`: the fixture of a test that starts a service process of its own, directly or through what
it runs (a notebook, a benchmark, a documented example, an operator's command). Asking for it marks the test
`server` (tests/support/markers.py), which the fast lane leaves out; and a service process the test leaves
running is ended when the test ends, so a failed test does not leave a server behind for the rest of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

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
