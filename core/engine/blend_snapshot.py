"""A blend's snapshot (core.engine.blend): its format, its id, and its check, which the one-embedder
snapshot's check (`snapshot.py`) calls; apart from the training so the snapshot's check imports no trainer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.engine.errors import SnapshotFormatError
from core.engine.snapshot_format import CHUNK_WORDS, FORMAT, FORMAT_VERSION
from core.engine.types import JsonObject

#: The snapshot's `scoring_method` of a blend: an engine from before it refuses the snapshot by name instead
#: of scoring its halves as one model.
BLEND_METHOD = "blend_of_embedders"
#: Every `scoring_method` that names a blend: the first written, the others stored by earlier versions.
BLEND_METHODS = (BLEND_METHOD, "blend_of_bodies")
#: The key of a blend's per-embedder entries in a trait's params and metrics (`core.engine.blend`).
EMBEDDERS = "embedders"
PREFIX = "blend:"


def blend_id(part_ids: Sequence[str]) -> str:
    """The embedder id of the blend of these embedders (in this order)."""
    return PREFIX + "+".join(part_ids)


def is_blend(snapshot: Mapping[str, Any]) -> bool:
    return snapshot.get("scoring_method") in BLEND_METHODS


def per_embedder(entry: object) -> list[Any] | None:
    """A trait's per-embedder entries of a blend (its params or metrics), one an embedder in the blend's
    order; None when `entry` is not a blend's. Reads `bodies`, the key versions stored before `embedders`."""
    if not isinstance(entry, Mapping):
        return None
    found = entry.get(EMBEDDERS, entry.get("bodies"))
    return found if isinstance(found, list) else None


def is_blend_id(embedder_id: str) -> bool:
    return embedder_id.startswith(PREFIX)


def dump_blend_snapshot(
    parts: Sequence[JsonObject], embedder_id: str, param_hash: str, slopes: Sequence[float]
) -> JsonObject:
    """The snapshot of a blend: the traits as every part names them with the blend's slope `k` of each (the
    mean of the parts' logits times k is its axis position: core.engine.scorer), and each part's whole
    snapshot."""

    fields = ("key", "name", "positive_label", "negative_label", "description", "aggregation")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scoring_method": BLEND_METHOD,
        "embedder": {
            "id": embedder_id,
            "dim": sum(int(p["embedder"]["dim"]) for p in parts),
            "model_sha256": None,
        },
        "param_hash": param_hash,
        "chunk_words": parts[0].get("chunk_words", CHUNK_WORDS),
        "traits": [
            {**{f: t[f] for f in fields}, "k": float(k)}
            for t, k in zip(parts[0]["traits"], slopes, strict=True)
        ],
        "parts": [dict(p) for p in parts],
    }


def check_blend(snapshot: Mapping[str, Any], load: Any) -> None:
    """Validate a blend snapshot's parts (each a one-embedder snapshot, checked by `load`) against its top
    level: the blend's id names the parts' ids in order, their dimensions add up, the traits and chunking
    agree."""

    def fail(message: str) -> SnapshotFormatError:
        return SnapshotFormatError(f"invalid snapshot: {message}")

    parts = snapshot.get("parts")
    if not isinstance(parts, list) or len(parts) < 2:
        raise fail("a blend's parts must be a list of at least two snapshots")
    loaded = [load(p) for p in parts]
    if any(is_blend(p) for p in loaded):
        raise fail("a blend's part must be a one-embedder snapshot")
    embedder = snapshot["embedder"]
    ids = [p["embedder"]["id"] for p in loaded]
    if embedder["id"] != blend_id(ids):
        raise fail(f"embedder.id {embedder['id']!r} does not name its parts' embedders {ids}")
    if embedder["dim"] != sum(p["embedder"]["dim"] for p in loaded):
        raise fail("embedder.dim must be the sum of its parts' dims")
    keys = [t.get("key") if isinstance(t, dict) else None for t in snapshot["traits"]]
    for i, t in enumerate(snapshot["traits"]):
        k = t.get("k", 1.0) if isinstance(t, dict) else 1.0
        if isinstance(k, bool) or not isinstance(k, int | float) or not 0.0 < k < float("inf"):
            raise fail(f"traits[{i}].k must be a positive number, found {k!r}")
    for i, p in enumerate(loaded):
        if [t["key"] for t in p["traits"]] != keys:
            raise fail(f"parts[{i}] must have the blend's traits, in its order")
        if p.get("chunk_words") != snapshot.get("chunk_words"):
            raise fail(f"parts[{i}].chunk_words must be the blend's")
