"""The embedders' int8 graphs built in the background from the service's first start, not in a user's run.

mpnet-base's graph takes minutes of CPU once a machine (docs/embedders.md); built on first use it would fall
inside a first training, behind a still bar. The process that runs trainings calls `start()` with its worker
where new models default to both embedders (`ahead`): a detached process of low priority builds what is
missing into the graphs' cache every data directory shares (`core.embedders.prebuild.start_detached`), each
graph under its own lock, so a training that needs one meanwhile waits for that build instead of making its
own, and one that needs another graph waits for nothing. `states()` is what `GET /v1/health` says of each
graph, in any process: built (its files are there), building (a process holds its lock), not built.
"""

from __future__ import annotations

import logging
import threading
from typing import Literal

log = logging.getLogger(__name__)

GraphState = Literal["built", "building", "not built"]

_started = False
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
    """Build the missing graphs in a detached process of low priority, once a process (a build that failed
    is tried again by the next start, or by the first training that needs it); False when none is missing,
    each is being built already (by another service, the install, a notebook's), or this process started
    one already."""
    global _started
    from core.embedders.prebuild import start_detached

    with _lock:
        if _started:
            return False
        process = start_detached(wanted())
        _started = process is not None
    if process is not None:
        log.info("int8 graphs: building the missing ones in the background (process %d)", process.pid)
    return process is not None


def states() -> dict[str, GraphState]:
    """Each wanted graph's state, by embedder id."""
    from core.embedders.prebuild import is_building, is_built

    out: dict[str, GraphState] = {}
    for embedder_id in wanted():
        if is_built(embedder_id):
            out[embedder_id] = "built"
        elif is_building(embedder_id):
            out[embedder_id] = "building"
        else:
            out[embedder_id] = "not built"
    return out
