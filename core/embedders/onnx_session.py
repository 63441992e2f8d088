"""The one way an onnxruntime session is opened here: threads bounded, spinning off, no arena, quiet."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_session(model: Path | bytes, threads: int = 0) -> Any:  # Any: onnxruntime ships no types
    """A CPU session over `model` (a file or serialized graph), `threads` intra-op threads (0: one a core).

    Spinning is off: by default onnxruntime's idle pool threads spin between a run's operators and between
    runs, taking CPU from whatever shares the cores (the service's request threads, a training run, other
    workers): beside two busy cores it doubled an e5 int8 session's CPU (docs/benchmarks/start.md, "Idle
    threads").

    The memory arena is off: an arena keeps what its session's largest run needed, for good, so a process
    holding several sessions (e5 and mpnet, and their one-thread scoring twins) held the sum of their
    largest batches: a worker peaked at 1.8 GB, 1.1 GB without (docs/benchmarks/memory.md). Short texts
    cost the same CPU either way; a batch of full 512-token windows ~20% more, its buffers allocated anew.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
