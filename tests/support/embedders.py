"""Where the tests' int8 graphs are kept across runs, and their build before a run.

`make test` runs `python -m tests.support.embedders` before pytest: it builds every int8 graph the suite uses
that is not in `suite_embedder_dir()` yet (mpnet-base's alone costs minutes of CPU), so no test waits behind a
build of a graph it did not set out to build, and a new machine with an empty cache runs as an old one does.
The `embedder_dir` fixture of tests/conftest.py points every test (and the processes they start) at the same
directory."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import time
from pathlib import Path

# The int8 graphs a run builds, kept across runs under a hash of the code that builds them: each graph's file
# name already holds its source weights' hash, its recipe and the onnxruntime version (core/embedders), so a
# change to any of those or to the build code builds anew. A directory unused for a week is removed.
EMBEDDER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scoring-workbench-tests"
CACHE_DAYS = 7
# Modules of core/embedders that decide which graphs to build and when, never what a graph holds.
NOT_BUILD_CODE = {"prebuild.py"}


def build_code_hash() -> str:
    """The embedders' code (the modules of core/embedders) and the onnx version that writes the graphs."""
    digest = hashlib.sha256(importlib.metadata.version("onnx").encode())
    for module in sorted((Path(__file__).resolve().parents[2] / "core" / "embedders").glob("*.py")):
        if module.name not in NOT_BUILD_CODE:
            digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()[:16]


def suite_embedder_dir() -> Path:
    """The directory of this build code's graphs (made, and marked used now); older unused ones removed."""
    path = EMBEDDER_CACHE / f"embedders-{build_code_hash()}"
    path.mkdir(parents=True, exist_ok=True)
    os.utime(path)
    for old in EMBEDDER_CACHE.glob("embedders-*"):
        if time.time() - old.stat().st_mtime > CACHE_DAYS * 86400:
            shutil.rmtree(old, ignore_errors=True)
    return path


def main() -> None:
    """Build the suite's missing int8 graphs, saying what was built and what it cost."""
    from core.embedders.prebuild import build_missing

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
