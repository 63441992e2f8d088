"""Build the int8 graphs that are not built yet, ahead of their first use.

An int8 graph is built on its embedder's first use (minutes of CPU for mpnet-base: docs/embedders.md),
inside whatever asked for a vector. `build_missing` builds them beforehand instead: `make test` runs it before
the suite (`python -m tests.support.embedders`); `make run`'s install and a service's start run it in a
detached process of low priority (`start_detached`, `python -m core.embedders.prebuild --detach`).
Each build goes through the embedder's own `graph_path()` (its build, gate, manifest and the graph's own
lock), so a process asking for the same graph meanwhile waits for this build instead of making its own.

    from core.embedders.prebuild import build_missing
    for graph in build_missing(progress=print):
        print(graph.id, "built" if graph.built else "already there", f"{graph.seconds:.0f} s")
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from core.embedders import graphs
from core.embedders.e5_quantized import E5_QINT8_ID, E5QuantizedEmbedder
from core.embedders.e5_quantized import built_path as e5_path
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


def graph_of(embedder_id: str, directory: Path | None = None) -> Path:
    """Where `embedder_id`'s graph is (default: the graphs' cache, graphs.py), built or not."""
    return _graph(embedder_id)[0](directory)


def is_built(embedder_id: str, directory: Path | None = None) -> bool:
    """Whether `embedder_id`'s graph and its manifest are in `directory` (not verified: no hashing)."""
    return graphs.is_built(graph_of(embedder_id, directory))


def is_building(embedder_id: str, directory: Path | None = None) -> bool:
    """Whether a process of this machine is building `embedder_id`'s graph now (it holds the graph's lock)."""
    return graphs.is_building(graph_of(embedder_id, directory))


def waiting_words(embedder_id: str) -> str | None:
    """What a training on `embedder_id` (a blend's parts each) waits for before its first vector: the first
    of its int8 graphs not built yet, said with no time (a build's minutes depend on what else the machine
    runs); None when each is built."""
    from core.embedders.blend import parts_of
    from core.embedders.registry import short_name

    for part in parts_of(embedder_id) or [embedder_id]:
        if part in _GRAPHS and not is_built(part):
            name = short_name(part)
            if is_building(part):
                return f"waiting for {name}'s int8 graph, being built on this machine (once for every user)"
            return f"building {name}'s int8 graph on this machine (once for every user)"
    return None


def missing(embedder_ids: Iterable[str] | None = None) -> list[str]:
    """Of `embedder_ids` (default `buildable()`), those whose graph is not in the graphs' cache yet."""
    return [i for i in (buildable() if embedder_ids is None else embedder_ids) if not is_built(i)]


def start_detached(embedder_ids: Iterable[str] | None = None) -> subprocess.Popen[bytes] | None:
    """Build the graphs of `embedder_ids` (default `buildable()`) not built yet in a process of its own, at
    the lowest CPU priority but e5-small's, that outlives this one (a session of its own; its log
    `prebuild.log` in the graphs' cache); None when none is missing or each is being built already."""
    todo = [i for i in missing(embedder_ids) if not is_building(i)]
    if not todo:
        return None
    folder = graphs.graphs_dir()
    graphs.make_folder(folder)
    try:
        log = (folder / "prebuild.log").open("ab")
    except OSError:  # another user's log in a shared cache
        log = open(os.devnull, "ab")  # noqa: SIM115 - closed below, once the process has it
    with log:
        process = subprocess.Popen(
            [sys.executable, "-m", "core.embedders.prebuild", "--nice", *todo],
            cwd=Path(__file__).resolve().parents[2],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's Ctrl-C or the service's stop leaves the build running
        )
    # Reaped when it ends, should this process outlive it.
    threading.Thread(target=process.wait, name="prebuild-reaper", daemon=True).start()
    return process


def build_missing(
    embedder_ids: Iterable[str] | None = None,
    directory: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Prebuilt]:
    """Build each graph of `embedder_ids` (full ids; default `buildable()`) not yet in `directory` (default
    the graphs' cache, graphs.py), one after the other, and verify each one built.
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


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m core.embedders.prebuild [--detach] [--nice] [ID …]`: build the missing graphs (default:
    every buildable one) into the graphs' cache, here or (`--detach`) in a process of low priority."""
    parser = argparse.ArgumentParser(prog="python -m core.embedders.prebuild", description=main.__doc__)
    parser.add_argument("ids", nargs="*", help="embedder ids (default: every graph this install can build)")
    parser.add_argument("--detach", action="store_true", help="build in a process of its own; return")
    parser.add_argument("--nice", action="store_true", help="build at the lowest CPU priority")
    args = parser.parse_args(argv)
    ids = args.ids or None
    if args.detach:
        todo = missing(ids)
        if start_detached(ids) is not None:  # silent when there is nothing to build
            print(f"Building the int8 graphs of {', '.join(todo)} in the background ({graphs.graphs_dir()})")
        return
    graphs.remove_unused()
    todo = buildable() if ids is None else ids
    # e5-small's graph at the usual priority: every first training waits for it (at the lowest, on a busy
    # machine, it would wait behind all else); the others, which no training waits for, at the lowest.
    first = [i for i in todo if i == E5_QINT8_ID] if args.nice else []
    build_missing(first, progress=_log)
    if args.nice and hasattr(os, "nice"):
        os.nice(19)
    build_missing([i for i in todo if i not in first], progress=_log)


def _log(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
