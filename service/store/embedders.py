"""Which embedder a model's vectors are in now: what suggestions, previews and the pool's cache embed
with, so that they read texts as the model's serving version does."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.embedders.registry import AUTO, embedder_of
from service.store.schema import Model, Version


def model_embedder(s: Session, model: Model) -> str | None:
    """The model's embedder id, or for `auto` the embedder its serving version was trained on (e5-small before
    it has one): `core.embedders.registry.embedder_of`. None for a model from before the setting (the
    service's default embedder, as `Embedders.get` reads None)."""
    if model.embedder is None:
        return None
    serving = None
    if model.embedder == AUTO and model.current_version_id is not None:
        metrics = s.scalar(select(Version.metrics).where(Version.id == model.current_version_id))
        found = metrics.get("embedder") if isinstance(metrics, dict) else None
        serving = found if isinstance(found, str) else None
    return embedder_of(model.embedder, serving)
