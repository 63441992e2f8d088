"""Build the int8 graphs that are not built yet, ahead of their first use.

An int8 graph is built on its embedder's first use (minutes of CPU for mpnet-base: docs/embedders.md),
inside whatever asked for a vector. `build_missing` builds them beforehand instead: `make test` runs it before
the suite (`python -m tests.support.embedders`), and a service may run it in the background at its start.
Each build goes through the embedder's own `graph_path()` (its build, gate, manifest and the `.build.lock` of
the directory), so a process asking for the same graph meanwhile waits for this build instead of making its
own.

    from core.embedders.prebuild import build_missing
    for graph in build_missing(progress=print):
        print(graph.id, "built" if graph.built else "already there", f"{graph.seconds:.0f} s")
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, Protocol

from core.embedders.e5_quantized import E5_QINT8_ID, E5QuantizedEmbedder
from core.embedders.e5_quantized import built_path as e5_path
from core.embedders.int8_build import manifest_path
from core.embedders.mpnet_quantized import MPNET_QINT8_ID, MPNetQuantizedEmbedder
from core.embedders.mpnet_quantized import built_path as mpnet_path
from core.embedders.mpnet_source import installed as mpnet_installed
from core.embedders.quantized import QINT8V2_ID, QuantizedMiniLMEmbedder
from core.embedders.quantized import built_path as minilm_path
from core.errors import EmbedderUnavailableError


class Prebuilt(NamedTuple):
    """One graph `build_missing` looked at: built now (`built`) or found built, and what building it cost."""

    id: str
    built: bool
    seconds: float  # wall time of the build (0 when found built)
    cpu_seconds: float  # CPU time of this process and its children during the build (every thread of it)
    path: Path


class _Graphed(Protocol):
    def graph_path(self) -> Path: ...


# The default embedder's graph first: it is the one most work waits for.
_GRAPHS: dict[str, tuple[Callable[[Path | None], Path], Callable[[Path | None], _Graphed]]] = {
    E5_QINT8_ID: (e5_path, lambda d: E5QuantizedEmbedder(directory=d)),
    MPNET_QINT8_ID: (mpnet_path, lambda d: MPNetQuantizedEmbedder(directory=d)),
    QINT8V2_ID: (minilm_path, lambda d: QuantizedMiniLMEmbedder(directory=d)),
}


def buildable() -> list[str]:
    """The ids of the int8 graphs this installation can build (mpnet-base's only where its weights are)."""
    return [i for i in _GRAPHS if i != MPNET_QINT8_ID or mpnet_installed()]


def is_built(embedder_id: str, directory: Path | None = None) -> bool:
    """Whether `embedder_id`'s graph and its manifest are in `directory` (not verified: no hashing)."""
    graph = _graph(embedder_id)[0](directory)
    return graph.exists() and manifest_path(graph).exists()


def build_missing(
    embedder_ids: Iterable[str] | None = None,
    directory: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Prebuilt]:
    """Build each graph of `embedder_ids` (full ids; default `buildable()`) not yet in `directory` (default
    the embedders directory: $SCORING_EMBEDDER_DIR, …), one after the other, and verify each one built.
    `progress` gets one line before each build and one after. Raises what a build raises (ModelFileError
    when a graph misses its gate); EmbedderUnavailableError for an id that has no int8 graph."""
    ids = buildable() if embedder_ids is None else list(embedder_ids)
    done: list[Prebuilt] = []
    for embedder_id in ids:
        where, embedder = _graph(embedder_id)
        if is_built(embedder_id, directory):
            done.append(Prebuilt(embedder_id, False, 0.0, 0.0, where(directory)))
            if progress:
                progress(f"{embedder_id}: already built in {where(directory).parent}")
            continue
        if progress:
            progress(f"{embedder_id}: building its int8 graph in {where(directory).parent} …")
        wall, cpu = time.perf_counter(), _cpu()
        path = embedder(directory).graph_path()
        graph = Prebuilt(embedder_id, True, time.perf_counter() - wall, _cpu() - cpu, path)
        done.append(graph)
        if progress:
            progress(f"{embedder_id}: built in {graph.seconds:.0f} s wall, {graph.cpu_seconds:.0f} s of CPU")
    return done


def _graph(embedder_id: str) -> tuple[Callable[[Path | None], Path], Callable[[Path | None], _Graphed]]:
    try:
        return _GRAPHS[embedder_id]
    except KeyError:
        raise EmbedderUnavailableError(
            f"{embedder_id!r} has no int8 graph to build; these do: {', '.join(_GRAPHS)}"
        ) from None


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
