"""The snapshot: a self-contained, versioned JSON document holding everything needed to score.

Layout (docs/engine.md has the field-by-field description)::

    {"format": "scoring-workbench/snapshot", "format_version": 1, "scoring_method": "balanced_cosine",
     "embedder": {"id": ..., "dim": ..., "model_sha256": ... | null}, "param_hash": ..., "chunk_words": 200,
     "traits": [{"key", "name", "positive_label", "negative_label", "description", "aggregation",
                 "w": [dim floats], "m_dot_w": float, "k": float, "params": {...}}]}

Floats are float64 written with Python's shortest round-trip repr, so a JSON round trip gives
back the very same numbers and the very same scores.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence

import numpy as np

from core.contract import AGGREGATIONS
from core.engine.blend_snapshot import BLEND_METHOD, BLEND_METHODS, check_blend
from core.engine.errors import SnapshotFormatError
from core.engine.snapshot_format import CHUNK_WORDS, FORMAT, FORMAT_VERSION
from core.engine.types import JsonObject, TraitSpec

SCORING_METHOD = "balanced_cosine"

_TRAIT_TEXT_FIELDS = ("key", "name", "positive_label", "negative_label", "description")


def model_sha256(embedder: object) -> str | None:
    """The model file hash behind an embedder, when it has one (MiniLM); None for model-free ones."""
    inner = getattr(embedder, "embedder", embedder)  # see through CachedEmbedder
    value = getattr(inner, "model_sha256", None)
    if isinstance(value, str):
        return value
    if str(getattr(inner, "id", "")).startswith("minilm-"):
        from core.embedders.minilm import MODEL_SHA256

        return MODEL_SHA256
    return None


def dump_snapshot(
    traits: Sequence[TraitSpec],
    axes: Sequence[tuple[np.ndarray, float, float]],
    params: dict[str, JsonObject],
    *,
    embedder_id: str,
    embedder_dim: int,
    embedder_model_sha256: str | None,
    param_hash: str,
) -> JsonObject:
    """Build the snapshot dict; `axes` holds (w, m_dot_w, k) per trait, in the order of `traits`."""
    entries = []
    for spec, (w, m_dot_w, k) in zip(traits, axes, strict=True):
        entries.append(
            {
                "key": spec.key,
                "name": spec.name,
                "positive_label": spec.positive_label,
                "negative_label": spec.negative_label,
                "description": spec.description,
                "aggregation": spec.aggregation,
                "w": [float(v) for v in np.asarray(w, dtype=np.float64)],
                "m_dot_w": float(m_dot_w),
                "k": float(k),
                "params": copy.deepcopy(params.get(spec.key, {})),
            }
        )
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scoring_method": SCORING_METHOD,
        "embedder": {"id": embedder_id, "dim": int(embedder_dim), "model_sha256": embedder_model_sha256},
        "param_hash": param_hash,
        "chunk_words": CHUNK_WORDS,
        "traits": entries,
    }


def _fail(message: str) -> SnapshotFormatError:
    return SnapshotFormatError(f"invalid snapshot: {message}")


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(f"{where} must be a finite number, found {value!r}")
    return float(value)


def _check_trait_text(entry: object, i: int) -> dict[str, object]:
    if not isinstance(entry, dict):
        raise _fail(f"traits[{i}] must be an object, found {type(entry).__name__}")
    for name in (*_TRAIT_TEXT_FIELDS, "aggregation"):
        if not isinstance(entry.get(name), str):
            raise _fail(f"traits[{i}].{name} must be a string, found {entry.get(name)!r}")
    if entry["aggregation"] not in AGGREGATIONS:
        raise _fail(
            f"traits[{i}].aggregation must be one of {', '.join(AGGREGATIONS)}, "
            f"found {entry['aggregation']!r}"
        )
    return entry


def _check_trait(entry: object, i: int, dim: int) -> None:
    entry = _check_trait_text(entry, i)
    w = entry.get("w")
    if not isinstance(w, list) or len(w) != dim:
        found = f"{len(w)} values" if isinstance(w, list) else repr(type(w).__name__)
        raise _fail(f"traits[{i}].w must be a list of {dim} numbers (the embedder's dim), found {found}")
    for j, v in enumerate(w):
        _number(v, f"traits[{i}].w[{j}]")
    _number(entry.get("m_dot_w"), f"traits[{i}].m_dot_w")
    if _number(entry.get("k"), f"traits[{i}].k") <= 0.0:
        raise _fail(f"traits[{i}].k must be positive, found {entry['k']!r}")
    if not isinstance(entry.get("params", {}), dict):
        raise _fail(f"traits[{i}].params must be an object")


def load_snapshot(snapshot: JsonObject | str | bytes) -> JsonObject:
    """Parse (if a JSON string) and validate a snapshot; return a deep copy safe to keep.

    Raises SnapshotFormatError naming what was found: not JSON, another format, another
    format_version, another scoring method, or a malformed field.
    """
    if isinstance(snapshot, str | bytes):
        try:
            snapshot = json.loads(snapshot)
        except ValueError as exc:
            raise _fail(f"not valid JSON ({exc})") from None
    if not isinstance(snapshot, dict):
        raise _fail(f"expected a JSON object, found {type(snapshot).__name__}")
    fmt = snapshot.get("format")
    if fmt != FORMAT:
        found = "no format field" if "format" not in snapshot else f"format {fmt!r}"
        raise SnapshotFormatError(
            f"not a scoring-workbench snapshot: expected format {FORMAT!r}, found {found}"
        )
    version = snapshot.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        found = (
            "no format_version field" if "format_version" not in snapshot else f"format_version {version!r}"
        )
        raise SnapshotFormatError(
            f"unsupported snapshot version: this engine reads format_version {FORMAT_VERSION}, found {found}"
        )
    method = snapshot.get("scoring_method")
    if method != SCORING_METHOD and method not in BLEND_METHODS:
        raise SnapshotFormatError(
            f"unsupported scoring method: this engine scores {SCORING_METHOD!r} and {BLEND_METHOD!r}, "
            f"found {method!r}"
        )
    embedder = snapshot.get("embedder")
    if not isinstance(embedder, dict) or not isinstance(embedder.get("id"), str) or not embedder["id"]:
        raise _fail("embedder.id must be a non-empty string")
    dim = embedder.get("dim")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise _fail(f"embedder.dim must be a positive integer, found {dim!r}")
    if not isinstance(snapshot.get("param_hash"), str):
        raise _fail("param_hash must be a string")
    chunk_words = snapshot.get("chunk_words", CHUNK_WORDS)
    if isinstance(chunk_words, bool) or not isinstance(chunk_words, int) or chunk_words < 1:
        raise _fail(f"chunk_words must be a positive integer, found {chunk_words!r}")
    traits = snapshot.get("traits")
    if not isinstance(traits, list) or not traits:
        raise _fail("traits must be a non-empty list")
    keys: set[str] = set()
    for i, entry in enumerate(traits):
        if method in BLEND_METHODS:  # its parts hold the weights (core.engine.blend)
            _check_trait_text(entry, i)
        else:
            _check_trait(entry, i, dim)
        if entry["key"] in keys:
            raise _fail(f"trait key {entry['key']!r} appears twice")
        keys.add(entry["key"])
    if method in BLEND_METHODS:
        check_blend(snapshot, load_snapshot)
    return copy.deepcopy(snapshot)
