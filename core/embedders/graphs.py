"""Where the int8 graphs are kept: one cache per user (or per machine: `SCORING_EMBEDDER_DIR`), shared by
every data directory, local service and test run, keyed by what determines a graph.

A graph is a function of its source weights, its recipe, the onnxruntime and onnx versions and the code that
builds it. Its file name holds the first three (`built_path` of each int8 embedder); the folder it is in,
`<cache>/<build_code_version()>`, the others. Nothing of a graph belongs to one data directory.

A build holds its graph's own lock file (`lock_path`), so two processes asking for one missing graph build it
once, and a graph being built holds up no other graph; a built graph is read without any lock (its file and
manifest are each moved in place whole: core/embedders/int8_build.py).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.config import core_settings

if TYPE_CHECKING:  # filelock is imported where a graph is built or probed
    from filelock import FileLock

#: Modules of core/embedders that decide which graphs to build, where and when, or read vectors from them,
#: never what a graph holds: editing them keeps the built graphs.
NOT_BUILD_CODE = frozenset(
    {"__init__.py", "prebuild.py", "graphs.py", "registry.py", "cache.py", "blend.py", "languages.py"}
    | {"hashing.py", "batching.py"}
)
#: A build code's folder no process has used for this long is removed by the next prebuild.
UNUSED_DAYS = 7


@functools.cache
def build_code_version() -> str:
    """A hash of the embedders' build code (the modules of core/embedders but `NOT_BUILD_CODE`) and of the
    onnx version that writes the graphs."""
    digest = hashlib.sha256(importlib.metadata.version("onnx").encode())
    for module in sorted(Path(__file__).resolve().parent.glob("*.py")):
        if module.name not in NOT_BUILD_CODE:
            digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()[:16]


def graphs_dir() -> Path:
    """The folder this build code's graphs are read from and built in (`SCORING_EMBEDDER_DIR`, else the user's
    cache directory; core/config.py)."""
    return core_settings().graph_cache / build_code_version()


def make_folder(folder: Path) -> None:
    """`folder` made with the mode of the folder it is in: in a cache every user of a machine may write to
    (`SCORING_EMBEDDER_DIR` of mode 1777, say), each of them may build into it too."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # another user's folder, made meanwhile
        folder.chmod(folder.parent.stat().st_mode & 0o7777)


def lock(graph: Path) -> FileLock:
    """The lock a build of `graph` holds, its file writable by every user who may build into the folder."""
    from filelock import FileLock

    return FileLock(lock_path(graph), mode=0o666)


def lock_path(graph: Path) -> Path:
    """The lock file a build of `graph` holds."""
    return graph.with_suffix(".lock")


def manifest_path(graph: Path) -> Path:
    """What the build of `graph` recorded of it (core/embedders/int8_build.py)."""
    return graph.with_suffix(".json")


def is_built(graph: Path) -> bool:
    """Whether `graph` and its manifest are there (not verified: no hashing). The manifest is moved in place
    after the graph, so both there means the build is complete."""
    return graph.exists() and manifest_path(graph).exists()


def is_building(graph: Path) -> bool:
    """Whether a build of `graph` holds its lock now, in any process on this machine."""
    from filelock import Timeout

    if not lock_path(graph).exists():
        return False
    probe = lock(graph)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:  # a lock file this user may not open: it cannot tell
        return False
    probe.release()
    return False


def remove_unused(days: float = UNUSED_DAYS) -> list[Path]:
    """Mark this build code's folder used now, and remove the cache's folders of other build code unused for
    `days` (their graphs are never read again by this code)."""
    mine = graphs_dir()
    make_folder(mine)
    os.utime(mine)
    removed = []
    for other in mine.parent.iterdir():
        if other != mine and other.is_dir() and time.time() - other.stat().st_mtime > days * 86400:
            shutil.rmtree(other, ignore_errors=True)
            removed.append(other)
    return removed
