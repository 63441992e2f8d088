"""A draft trait's zero-shot preview: scores of a few probe texts from its pole labels alone."""

from __future__ import annotations

from core import engine
from core.contract import trait_key
from core.engine.types import TraitSpec
from service.domain.access import load_model
from service.domain.needs import Resources
from service.schemas.preview import TraitPreviewIn, TraitPreviewOut
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.embedders import model_embedder


def preview_trait(ctx: Resources, who: Principal, handle: str, payload: TraitPreviewIn) -> TraitPreviewOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)  # an authoring key that can read it (nothing is written)
        embedder = ctx.embedders.get(model_embedder(s, model), retain=not model.zero_data_retention)
    t = payload.trait
    spec = TraitSpec(
        trait_key(t.name),
        t.name,
        t.positive_label,
        t.negative_label,
        t.description,
        t.aggregation,
    )
    scores, (positive, negative) = engine.preview_zero_shot(spec, payload.texts, embedder=embedder)
    return TraitPreviewOut(
        scores=[round(min(1.0, max(0.0, float(x))), 6) for x in scores],
        positive_texts=positive,
        negative_texts=negative,
        embedder=embedder.id,
    )
