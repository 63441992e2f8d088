"""The tests' int8 graphs: the user's graphs' cache (core/embedders/graphs.py), and their build before a run.

`make test` runs `python -m tests.support.embedders` before pytest: it builds every int8 graph the suite uses
that is not in the cache yet (mpnet-base's alone costs minutes of CPU), so no test waits behind a build of a
graph it did not set out to build. The cache is the one `make run`, every data directory and the notebook's
local services use, so a graph the tests built is never built again for the workbench, nor the reverse. The
`embedder_dir` fixture of tests/conftest.py points every test (and the processes they start) at it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from core.config import user_cache_dir
from core.embedders.graphs import UNUSED_DAYS, graphs_dir, remove_unused

# Where the tests kept graphs of their own before they shared the user's: removed once unused for as long.
OLD_TEST_CACHE = user_cache_dir() / "scoring-workbench-tests"


def suite_embedder_dir() -> Path:
    """The folder of this build code's graphs in the graphs' cache (made, and marked used now)."""
    path = graphs_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    """Build the suite's missing int8 graphs, saying what was built and what it cost."""
    from core.embedders.prebuild import build_missing

    remove_unused()
    for old in OLD_TEST_CACHE.glob("embedders-*"):
        if time.time() - old.stat().st_mtime > UNUSED_DAYS * 86400:
            shutil.rmtree(old, ignore_errors=True)
    directory = suite_embedder_dir()
    started = time.perf_counter()
    done = build_missing(directory=directory, progress=lambda line: print(f"  {line}", flush=True))
    built = [g for g in done if g.built]
    if built:
        cpu = sum(g.cpu_seconds for g in built)
        print(
            f"Built {len(built)} int8 graph(s) for the tests in {time.perf_counter() - started:.0f} s wall, "
            f"{cpu:.0f} s of CPU ({directory})"
        )
    else:
        print(f"The tests' {len(done)} int8 graphs are built already ({directory})")


if __name__ == "__main__":
    main()
