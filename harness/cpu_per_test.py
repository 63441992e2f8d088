"""Where a test run's CPU goes: a pytest plugin that writes each test's CPU seconds, and a summary per file.

    PYTEST_ADDOPTS="-p harness.cpu_per_test" make test   # one artifacts/cpu/<worker>.jsonl per xdist worker
    python -m harness.cpu_per_test artifacts/cpu          # CPU seconds per test file, the most first

A test's CPU is what it adds, over its setup, call and teardown, to: this process's own CPU, its waited-for
children's, and the CPU so far of every process still running below it (with their waited-for children). So
a service, Streamlit or Playwright started for the test counts for it; a module fixture's start counts for
the module's first test. A process that leaves the tree is not counted: the PostgreSQL server, which
`pg_ctl` starts as a daemon; nor is it in `.ci/run`'s last line, which counts the processes it waited for.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import pytest

from harness.processes import tree_cpu_seconds

DEFAULT_DIR = Path("artifacts/cpu")


class Row(TypedDict):
    """One line of a worker's file: a test's node id, its CPU and its wall seconds."""

    test: str
    cpu_s: float
    wall_s: float


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-dir", type=Path, default=DEFAULT_DIR, help="where each test's CPU is written")


class _Recorder:
    def __init__(self, out: Path) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self._file = out.open("a", encoding="utf-8")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        cpu, wall = tree_cpu_seconds(), time.monotonic()
        try:
            return (yield)
        finally:
            spent, took = tree_cpu_seconds() - cpu, time.monotonic() - wall
            row: Row = {"test": item.nodeid, "cpu_s": round(spent, 3), "wall_s": round(took, 3)}
            self._file.write(json.dumps(row) + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def pytest_configure(config: pytest.Config) -> None:
    # The process that runs the tests records: an xdist worker, or pytest without workers (not their master).
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        recorder = _Recorder(config.getoption("--cpu-dir") / f"{worker}.jsonl")
        config.pluginmanager.register(recorder, "cpu_per_test_recorder")
        config.add_cleanup(recorder.close)


@dataclass
class FileCost:
    cpu_s: float = 0.0
    wall_s: float = 0.0
    tests: int = 0


def per_file(rows: Iterable[Row]) -> list[tuple[str, FileCost]]:
    """Each test file's CPU and wall seconds and test count, the most CPU first."""
    files: defaultdict[str, FileCost] = defaultdict(FileCost)
    for row in rows:
        cost = files[row["test"].split("::")[0]]
        cost.cpu_s += row["cpu_s"]
        cost.wall_s += row["wall_s"]
        cost.tests += 1
    return sorted(files.items(), key=lambda kv: -kv[1].cpu_s)


def read(paths: Sequence[Path]) -> list[Row]:
    files = [f for p in paths for f in (sorted(p.glob("*.jsonl")) if p.is_dir() else [p])]
    return [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.cpu_per_test", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, default=[DEFAULT_DIR], help="directories or .jsonl files"
    )
    parser.add_argument("--top", type=int, default=40, help="how many files to list")
    args = parser.parse_args(argv)
    files = per_file(read(args.paths))
    total = sum(c.cpu_s for _, c in files)
    print(f"{total:.0f} s of CPU in {sum(c.tests for _, c in files)} tests of {len(files)} files")
    print(f"{'CPU s':>8} {'wall s':>8} {'tests':>5}  file")
    for name, c in files[: args.top]:
        print(f"{c.cpu_s:8.1f} {c.wall_s:8.1f} {c.tests:5d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
