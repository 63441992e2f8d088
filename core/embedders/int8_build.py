"""What the int8 builds share (`quantized.py` for MiniLM, `e5_quantized.py` for e5-small): the quantization of
the weight MatMuls, the quality gate and the manifest written beside the graph, and the check of a built graph
against its manifest before it serves anything (docs/embedders.md)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from core.errors import ModelFileError
from core.json_types import JsonObject

# One build at a time in a process; os.replace makes an install atomic across processes.
_build_lock = threading.Lock()


class BuildRecipe(Protocol):
    """What an int8 build records of its recipe (quantized.Recipe for MiniLM, e5_quantized.E5Recipe)."""

    @property
    def embedder_id(self) -> str: ...
    @property
    def float_nodes(self) -> tuple[str, ...]: ...
    @property
    def smooth_alpha(self) -> float | None: ...


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_path(graph: Path) -> Path:
    return graph.with_suffix(".json")


def quantize_matmuls(source: Path, dest: Path, float_nodes: Sequence[str]) -> None:
    """Every weight MatMul of `source` but `float_nodes` in int8, one scale per output column."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        source,
        dest,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
        nodes_to_exclude=list(float_nodes),
        extra_options={"MatMulConstBOnly": True},  # attention's activation x activation stays float
    )


def install(
    built: Path,
    dest: Path,
    recipe: BuildRecipe,
    source_sha256: str,
    cosine: np.ndarray,
    min_cosine: float,
    what: str,
) -> JsonObject:
    """Gate `built` on its cosines to the reference (`what` names both for the error), then move it to `dest`
    atomically with its manifest beside it (what `recipe` built it from: its `embedder_id`, `float_nodes`,
    `smooth_alpha`); ModelFileError, and nothing installed, on a miss."""
    import onnxruntime

    manifest = {
        "id": recipe.embedder_id,
        "source_sha256": source_sha256,
        "float_nodes": list(recipe.float_nodes),
        "smooth_alpha": recipe.smooth_alpha,
        "onnxruntime": onnxruntime.__version__,
        "gate_texts": len(cosine),
        "gate_cosine_min": round(float(cosine.min()), 5),
        "gate_cosine_mean": round(float(cosine.mean()), 6),
    }
    if cosine.min() < min_cosine:
        raise ModelFileError(
            f"the {what} built with onnxruntime {onnxruntime.__version__} misses its quality gate: "
            f"minimum cosine {cosine.min():.4f} < {min_cosine} on {len(cosine)} texts"
        )
    manifest["sha256"] = sha256(built)
    os.replace(built, dest)  # a concurrent reader sees no file or the whole file
    manifest_path(dest).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def checked_graph(graph: Path, build: Callable[[], object], source_sha256: str, embedder_id: str) -> Path:
    """`graph`, built first by `build()` if it or its manifest is missing, and checked against the manifest:
    the same source and recipe, and the sha256 the build recorded."""
    with _build_lock:
        if not graph.exists() or not manifest_path(graph).exists():
            build()
    try:
        manifest = json.loads(manifest_path(graph).read_text())
        expected = manifest["sha256"]
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFileError(f"{embedder_id}: manifest unreadable: {manifest_path(graph)}") from exc
    if manifest.get("source_sha256") != source_sha256 or manifest.get("id") != embedder_id:
        raise ModelFileError(f"{embedder_id}: {graph} was built from another source or recipe")
    found = sha256(graph)
    if found != expected:
        raise ModelFileError(
            f"{embedder_id}: graph failed its sha256 check: {graph} has {found}, expected {expected} "
            "(delete it and its .json to rebuild)"
        )
    return graph
