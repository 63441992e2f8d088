"""Where the tests' int8 graphs are kept across runs (the `embedder_dir` fixture of tests/conftest.py)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from pathlib import Path

# The int8 graphs a run builds, kept across runs under a hash of the code that builds them: each graph's file
# name already holds its source weights' hash, its recipe and the onnxruntime version (core/embedders), so a
# change to any of those or to the build code builds anew. A directory unused for a week is removed.
EMBEDDER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scoring-workbench-tests"
CACHE_DAYS = 7


def build_code_hash() -> str:
    """The embedders' code (every module of core/embedders) and the onnx version that writes the graphs."""
    digest = hashlib.sha256(importlib.metadata.version("onnx").encode())
    for module in sorted((Path(__file__).resolve().parents[2] / "core" / "embedders").glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()[:16]
