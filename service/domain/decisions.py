"""Decisions next to scores: a version's per-trait thresholds applied to the scores it returned."""

from __future__ import annotations

from core.json_types import JsonObject
from service.schemas.score import TraitScore


def with_decisions(block: list[TraitScore], thresholds: JsonObject | None) -> list[JsonObject]:
    """The score entries as JSON; a trait with a threshold adds `threshold` and `decision` (score ≥ threshold,
    both as returned, so a client can check it). Traits without one keep exactly the spec's fields."""
    out = []
    for entry in block:
        item = entry.model_dump()
        chosen = (thresholds or {}).get(entry.trait)
        if chosen is not None:
            item["threshold"] = chosen["threshold"]
            item["decision"] = entry.score >= chosen["threshold"]
        out.append(item)
    return out
