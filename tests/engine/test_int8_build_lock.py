"""Processes that need the same int8 graph at once wait for one build of it, and a graph already built is
checked without any lock: a build of another graph, in this process or another, holds up none of its readers
(core/embedders/int8_build.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.embedders.graphs import is_building, lock_path, manifest_path
from core.embedders.int8_build import activations, checked_graph, sha256

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Recipe:
    embedder_id: str = "test-int8@00000000"
    float_nodes: tuple[str, ...] = ()
    smooth_alpha: float | None = None
    per_token: bool = True


SOURCE = "0" * 64


def write_graph(graph: Path) -> None:
    """A stand-in build: the graph and then its manifest, each moved in place whole, as `install` does."""
    graph.with_suffix(".tmp").write_bytes(b"graph")
    graph.with_suffix(".tmp").replace(graph)
    manifest = {"sha256": sha256(graph), "source_sha256": SOURCE, "id": Recipe().embedder_id}
    manifest_path(graph).write_text(json.dumps(manifest | {"activations": activations(Recipe())}))


# A process that needs the graph at argv[1]; its build (slow enough for the others to arrive) is logged in
# argv[2]. Its own interpreter, not multiprocessing's spawn: that re-runs the parent's __main__, which in a
# test process may be a page script a Streamlit AppTest left there.
NEED = """
import sys, time
from pathlib import Path
from tests.engine.test_int8_build_lock import Recipe, SOURCE, write_graph
from core.embedders.int8_build import checked_graph

graph, builds = Path(sys.argv[1]), Path(sys.argv[2])

def build() -> None:
    with builds.open("a") as log:
        log.write("built\\n")
    time.sleep(1.0)
    write_graph(graph)

checked_graph(graph, build, SOURCE, Recipe())
"""

# Another process building a graph: it holds the graph's lock until its stdin closes.
HOLD = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_processes_starting_together_build_once(tmp_path: Path) -> None:
    graph, builds = tmp_path / "embedders" / "test.onnx", tmp_path / "builds.log"
    cmd = [sys.executable, "-c", NEED, str(graph), str(builds)]
    processes = [subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0], errors
    assert builds.read_text() == "built\n"
    assert checked_graph(graph, lambda: pytest.fail("built again"), SOURCE, Recipe()).read_bytes() == b"graph"


@pytest.mark.timeout(120)  # a reader that waited for a build would wait for ever: the build waits for it
def test_a_built_graph_is_read_while_other_graphs_are_being_built(tmp_path: Path) -> None:
    built, elsewhere, here = (tmp_path / f"{name}.onnx" for name in ("built", "elsewhere", "here"))
    write_graph(built)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock_path(elsewhere))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert is_building(elsewhere) and not is_building(built)
        read: list[Path] = []

        def build_here() -> None:  # a build in this process, reading the built graph from another thread
            reader = threading.Thread(
                target=lambda: read.append(checked_graph(built, lambda: None, SOURCE, Recipe()))
            )
            reader.start()
            reader.join()
            write_graph(here)

        checked_graph(here, build_here, SOURCE, Recipe())
        assert read == [built]
    finally:
        holder.communicate("")
    assert not is_building(elsewhere)
