"""The one way an onnxruntime session is opened here: threads bounded, spinning off, arena shrunk, quiet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class ShrinkingSession:
    """An onnxruntime session whose every run hands its memory arena's free regions back when it ends."""

    def __init__(self, session: Any, run_options: Any) -> None:  # Any: onnxruntime ships no types
        self._session, self._run_options = session, run_options

    def run(self, outputs: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        result: list[np.ndarray] = self._session.run(outputs, feeds, run_options=self._run_options)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def open_session(model: Path | bytes, threads: int = 0) -> Any:  # Any: onnxruntime ships no types
    """A CPU session over `model` (a file or serialized graph), `threads` intra-op threads (0: one a core).

    Spinning is off: by default onnxruntime's idle pool threads spin between a run's operators and between
    runs, taking CPU from whatever shares the cores (the service's request threads, a training run, other
    workers): beside two busy cores it doubled an e5 int8 session's CPU (docs/benchmarks/start.md, "Idle
    threads").

    The memory arena is on, shrunk after every run: an arena keeps what its session's largest run needed, for
    good, so a process holding several sessions (e5 and mpnet, and their one-thread scoring twins) held the
    sum of their largest batches (a worker peaked at 1.8 GB). Shrinking hands a run's free blocks back when
    it ends, so a process peaks at one batch's (873 MB with both int8 embedders, 1,005 MB with the arena
    off), while a run still reuses its arena's blocks: full 512-token windows cost 4-5% more CPU than with
    the arena kept, 27-52% more with it off (docs/benchmarks/memory.md).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    run_options = ort.RunOptions()
    run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return ShrinkingSession(session, run_options)
