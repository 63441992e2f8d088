"""Processes that need the same int8 graph at once wait for one build of it (core/embedders/int8_build.py)."""

from __future__ import annotations

import json
import multiprocessing
import time
from dataclasses import dataclass
from pathlib import Path

from core.embedders.int8_build import activations, checked_graph, manifest_path, sha256

SOURCE_SHA = "0" * 64


@dataclass(frozen=True)
class Recipe:
    embedder_id: str = "test-int8@00000000"
    float_nodes: tuple[str, ...] = ()
    smooth_alpha: float | None = None
    per_token: bool = True


def _need(graph: str, builds: str) -> None:
    """A process that needs `graph`; its build (slow enough for the others to arrive) is logged in
    `builds`."""

    def build() -> None:
        with open(builds, "a") as log:
            log.write("built\n")
        time.sleep(1.0)
        path = Path(graph)
        path.write_bytes(b"graph")
        manifest = {"sha256": sha256(path), "source_sha256": SOURCE_SHA, "id": Recipe().embedder_id}
        manifest_path(path).write_text(json.dumps(manifest | {"activations": activations(Recipe())}))

    checked_graph(Path(graph), build, SOURCE_SHA, Recipe())


def test_processes_starting_together_build_once(tmp_path: Path) -> None:
    graph, builds = tmp_path / "embedders" / "test.onnx", tmp_path / "builds.log"
    spawn = multiprocessing.get_context("spawn")
    processes = [spawn.Process(target=_need, args=(str(graph), str(builds))) for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert builds.read_text() == "built\n"
    assert graph.read_bytes() == b"graph"
