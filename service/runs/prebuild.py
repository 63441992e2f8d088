"""The embedders' int8 graphs built in the background from the service's first start, not in a user's run.

mpnet-base's graph takes minutes of CPU and ~3 GB once a machine (docs/embedders.md); built on first use it
would fall inside the first training on both embedders, behind a still bar. The process that runs trainings
starts `start()` with its worker where new models default to both embedders (`ahead`): one daemon thread
builds what is missing (`core.embedders.prebuild`, which shares the directory's `.build.lock` with every other
build, so a training that needs the graph meanwhile waits for this build instead of making its own).
`states()` is what `GET /v1/health` says of each graph, in any process: built (its files are there), building
(a build holds the directory's lock, or this process's thread is at it), not built.
"""

from __future__ import annotations

import logging
import threading
from typing import Literal

log = logging.getLogger(__name__)

GraphState = Literal["built", "building", "not built"]

_thread: threading.Thread | None = None
_failed: str | None = None
_lock = threading.Lock()


def wanted() -> list[str]:
    """The graphs built ahead: the embedders' (e5-small's, and mpnet-base's where its weights are
    installed)."""
    from core.embedders.prebuild import buildable
    from core.embedders.registry import EMBEDDERS

    can = set(buildable())
    return [b for b in EMBEDDERS if b in can]


def ahead(default_embedder: str) -> bool:
    """Whether a service whose new models default to `default_embedder` builds the graphs ahead: where that
    is `auto` or `blend` (a service set to one embedder builds mpnet-base's on its first use, if ever)."""
    from core.contract import AUTO_EMBEDDER, BLEND_EMBEDDER

    return default_embedder in (AUTO_EMBEDDER, BLEND_EMBEDDER)


def start() -> bool:
    """Build the missing graphs on a daemon thread, once a process; False when nothing is left to build."""
    global _thread
    from core.embedders.prebuild import is_built

    missing = [b for b in wanted() if not is_built(b)]
    with _lock:
        if not missing or (_thread is not None and _thread.is_alive()):
            return False
        _thread = threading.Thread(target=_build, args=(missing,), name="prebuild-graphs", daemon=True)
        _thread.start()
    return True


def _build(ids: list[str]) -> None:
    global _failed
    from core.embedders.prebuild import build_missing

    try:
        build_missing(ids, progress=lambda line: log.info("int8 graphs: %s", line))
    except Exception as exc:  # a failed build is retried by the first use, which reports it to its run
        _failed = f"{type(exc).__name__}: {exc}"
        log.warning("int8 graphs: the background build failed (%s); the first use builds it", _failed)


def states() -> dict[str, GraphState]:
    """Each wanted graph's state, by embedder id."""
    from core.embedders.prebuild import is_built

    out: dict[str, GraphState] = {}
    for embedder_id in wanted():
        if is_built(embedder_id):
            out[embedder_id] = "built"
        elif (_thread is not None and _thread.is_alive()) or _lock_held(embedder_id):
            out[embedder_id] = "building"
        else:
            out[embedder_id] = "not built"
    return out


def _lock_held(embedder_id: str) -> bool:
    """Whether a build holds the lock of the directory `embedder_id`'s graph is built in (any process)."""
    from filelock import FileLock, Timeout

    from core.embedders.quantized import embedders_dir

    lock_path = embedders_dir() / ".build.lock"
    if not lock_path.exists():
        return False
    probe = FileLock(lock_path)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False
