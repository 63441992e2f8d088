"""Local engine resources shared by every session: embedders and scorers from snapshots."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import streamlit as st

from core.client import ApiError, Client, Model
from core.embedders import get_embedder
from core.embedders.base import Embedder
from core.embedders.cache import CachedEmbedder, MemoryStore
from core.embedders.registry import AUTO, EMBEDDERS, available_embedders, embedder_of
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


def model_embedder(client: Client, model: Model) -> str:
    """The embedder id the local engine embeds `model`'s texts with (previews, flags, the label curve): the
    model's own embedder, or for `auto` the embedder its serving version was trained on, so the local figures
    are in the space the service's are (`registry.embedder_of`). An embedder whose weights this machine lacks
    (a remote service's mpnet-base) falls back to e5-small-qint8: these are local approximations, and one that
    runs beats an error; a serving version that cannot be read falls back the same way."""
    serving = None
    if model.embedder == AUTO and model.version_no:
        with contextlib.suppress(ApiError):
            serving = client.get_version(model.handle, model.version_no).embedder_id
    embedder = embedder_of(model.embedder, serving)
    return (
        embedder
        if embedder not in EMBEDDERS or embedder in available_embedders()
        else embedder_of(None, None)
    )


def scorer(snapshot: JsonObject) -> Scorer:
    """A `core.engine.Scorer` of a version snapshot (its embedder resolved from the snapshot's id)."""
    from core.engine import Scorer

    return Scorer.from_snapshot(snapshot, embedder(snapshot_embedder_id(snapshot)))


def snapshot_embedder_id(snapshot: JsonObject) -> str:
    emb = snapshot.get("embedder")
    if isinstance(emb, dict):
        return str(emb.get("id"))
    return str(emb or snapshot.get("embedder_id"))
