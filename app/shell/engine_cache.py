"""Local engine resources shared by every session: embedders and scorers from snapshots."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from core.embedders import get_embedder
from core.embedders.base import Embedder
from core.embedders.cache import CachedEmbedder, MemoryStore
from core.json_types import JsonObject

if TYPE_CHECKING:  # the engine loads with the first scorer
    from core.engine import Scorer

SAMPLE_CACHE_ITEMS = 50_000  # 384 float32 each: ~75 MB at most


@st.cache_resource(show_spinner="Loading the embedder…")
def embedder(name: str) -> Embedder:
    # No embedding cache: previews may score zero-data-retention content, which must not be kept.
    return get_embedder(name)


@st.cache_resource(show_spinner="Loading the embedder…")
def sample_embedder(name: str) -> Embedder:
    """The embedder with an in-memory cache, for a model's stored samples (flags): the service keeps them
    anyway, so checking them again costs no second encoding. Never for zero-data-retention models."""
    return CachedEmbedder(get_embedder(name), MemoryStore(max_items=SAMPLE_CACHE_ITEMS))


def scorer(snapshot: JsonObject) -> Scorer:
    """A `core.engine.Scorer` of a version snapshot (its embedder resolved from the snapshot's id)."""
    from core.engine import Scorer

    return Scorer.from_snapshot(snapshot, embedder(snapshot_embedder_id(snapshot)))


def snapshot_embedder_id(snapshot: JsonObject) -> str:
    emb = snapshot.get("embedder")
    if isinstance(emb, dict):
        return str(emb.get("id"))
    return str(emb or snapshot.get("embedder_id"))
