"""Processes that need the same int8 graph at once wait for one build of it (core/embedders/int8_build.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A process that needs the graph at argv[1]; its build (slow enough for the others to arrive) is logged in
# argv[2]. Its own interpreter, not multiprocessing's spawn: that re-runs the parent's __main__, which in a
# test process may be a page script a Streamlit AppTest left there.
NEED = """
import json, sys, time
from dataclasses import dataclass
from pathlib import Path
from core.embedders.int8_build import activations, checked_graph, manifest_path, sha256

@dataclass(frozen=True)
class Recipe:
    embedder_id: str = "test-int8@00000000"
    float_nodes: tuple[str, ...] = ()
    smooth_alpha: float | None = None
    per_token: bool = True

graph, builds = Path(sys.argv[1]), Path(sys.argv[2])

def build() -> None:
    with builds.open("a") as log:
        log.write("built\\n")
    time.sleep(1.0)
    graph.write_bytes(b"graph")
    manifest = {"sha256": sha256(graph), "source_sha256": "0" * 64, "id": Recipe().embedder_id}
    manifest_path(graph).write_text(json.dumps(manifest | {"activations": activations(Recipe())}))

checked_graph(graph, build, "0" * 64, Recipe())
"""


def test_processes_starting_together_build_once(tmp_path: Path) -> None:
    graph, builds = tmp_path / "embedders" / "test.onnx", tmp_path / "builds.log"
    cmd = [sys.executable, "-c", NEED, str(graph), str(builds)]
    processes = [subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], errors
    assert builds.read_text() == "built\n"
    assert graph.read_bytes() == b"graph"
