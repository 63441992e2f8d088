"""Run a command beside CPU-bound processes: the load a shared CI machine puts on a test suite.

    python -m harness.busy [--procs 2] -- COMMAND ...

Starts `--procs` processes that spin on the CPU (on two cores, two of them and a test suite make a load
of about 4), runs COMMAND, stops them, and exits with COMMAND's status. Browser tests must pass like this:
their waits are conditions the page reaches, not durations tuned to an idle machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys


def _spin() -> None:
    while True:
        pass


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
