"""Run a command beside CPU-bound processes: the load a shared CI machine puts on a test suite.

    python -m harness.busy [--procs 2] -- COMMAND ...

Starts `--procs` processes that spin on the CPU (on two cores, two of them and a test suite make a load
of about 4), runs COMMAND, stops them, and exits with COMMAND's status. Browser tests must pass like this:
their waits are conditions the page reaches, not durations tuned to an idle machine.

`spinning(procs, seconds, nice)` is the same load inside a test, for a bounded time.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

# One interpreter that forks the others (cheaper than one each, and no fork from the caller's threads); each
# spins until the deadline, so none outlives a test that fails to stop them.
_SPINNERS = """
import os, sys, time
procs, seconds, nice = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
os.nice(nice)
deadline = time.monotonic() + seconds
for _ in range(procs - 1):
    if os.fork() == 0:
        break
while time.monotonic() < deadline:
    pass
"""


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def spinning(procs: int, seconds: float, nice: int = 0) -> Iterator[None]:
    """`procs` processes spinning on the CPU at `nice` for the block, at most `seconds`. They stay in the
    caller's session: where the kernel groups a session's processes (autogroup), they compete with the
    caller's other processes by their nice value, not as a group of their own."""
    spinners = subprocess.Popen(
        [sys.executable, "-c", _SPINNERS, str(procs), str(seconds), str(nice)], process_group=0
    )
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(spinners.pid, signal.SIGKILL)
        spinners.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.busy", description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=2, help="CPU-bound processes beside the command")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.procs)]
    for p in spinners:
        p.start()
    try:
        return subprocess.call(command)
    finally:
        for p in spinners:
            p.terminate()
            p.join()


if __name__ == "__main__":
    sys.exit(main())
