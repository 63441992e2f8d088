"""Zero-shot preview of a trait being written: its pole labels' scores on a few probe texts (addition)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from core.contract import trait_key
from core.engine import TraitSpec, preview_zero_shot
from service.auth import AuthoringKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.routes.common import errors
from service.schemas import Strict, Text, TraitIn

router = APIRouter(tags=["traits"])

MAX_PROBES = 20


class TraitPreviewIn(Strict):
    trait: TraitIn
    texts: list[Text] = Field(min_length=1, max_length=MAX_PROBES, description="1-20 probe texts.")


class TraitPreviewOut(BaseModel):
    scores: list[float] = Field(description="The zero-shot score of each probe text, in order.")
    positive_texts: list[str] = Field(description="The pole texts the positive end of the axis comes from.")
    negative_texts: list[str]
    embedder: str


@router.post("/models/{handle}/traits/preview", response_model=TraitPreviewOut, responses=errors(403, 404))
def preview_trait(handle: str, body: TraitPreviewIn, who: AuthoringKey, ctx: CtxDep) -> TraitPreviewOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)  # an authoring key that can read it (nothing is written)
        embedder = ctx.embedders.get(model.embedder, retain=not model.zero_data_retention)
    t = body.trait
    spec = TraitSpec(
        trait_key(t.name),
        t.name,
        t.positive_label,
        t.negative_label,
        t.description,
        t.aggregation,
    )
    scores, (positive, negative) = preview_zero_shot(spec, body.texts, embedder=embedder)
    return TraitPreviewOut(
        scores=[round(min(1.0, max(0.0, float(x))), 6) for x in scores],
        positive_texts=positive,
        negative_texts=negative,
        embedder=embedder.id,
    )
