"""CPU a service process spends importing what it runs on, before it serves anything.

`python -m benchmarks.process_start [--root CHECKOUT] [--runs 5]`: in fresh interpreters, imports an API
process's and a worker's entry modules and builds the API app on an empty data directory, as `serve` and
`worker` do before their first request or run. Prints the median user+system CPU seconds; `--root` measures
another checkout (an older commit in a `git worktree`) with this interpreter.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What `serve` and `worker` import and build before their first request or run
# (tests/engine/test_lazy_imports.py checks it loads no scikit-learn).
# Loaded as they load it: without the cyclic collector (`service.commands.serving.loading`; a checkout from
# before it loads with it).
START = """
import contextlib, tempfile
from service.config.settings import Settings
try:
    from service.commands.serving import loading
except ImportError:
    loading = contextlib.nullcontext
with loading(), tempfile.TemporaryDirectory() as data:
    from service.process.api import create_app
    import service.process.worker, service.runs.child, uvicorn
    create_app(Settings.from_env(data_dir=data))
"""


def cpu_seconds(root: Path, env: dict[str, str]) -> float:
    """User+system CPU of one fresh interpreter running START in `root`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", START], cwd=root, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    plain = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")} | {"PYTHONPATH": str(root)}
    times = [cpu_seconds(root, plain) for _ in range(args.runs)]
    print(f"median {statistics.median(times):.2f} s CPU ({args.runs} starts, {root})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
