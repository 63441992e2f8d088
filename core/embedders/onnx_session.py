"""The one way an onnxruntime session is opened here: threads bounded, spinning off, quiet."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_session(model: Path | bytes, threads: int = 0) -> Any:  # Any: onnxruntime ships no types
    """A CPU session over `model` (a file or serialized graph), `threads` intra-op threads (0: one a core).

    Spinning is off: by default onnxruntime's idle pool threads spin between a run's operators and between
    runs, taking CPU from whatever shares the cores (the service's request threads, a training run, other
    workers): beside two busy cores it doubled an e5 int8 session's CPU (docs/benchmarks/start.md, "Idle
    threads").
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
