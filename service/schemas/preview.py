"""A trait's zero-shot preview on probe texts (`routes/preview.py`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.contract import MAX_PREVIEW_TEXTS
from service.schemas.common import Strict, Text
from service.schemas.traits import TraitIn


class TraitPreviewIn(Strict):
    trait: TraitIn
    texts: list[Text] = Field(
        min_length=1, max_length=MAX_PREVIEW_TEXTS, description=f"1-{MAX_PREVIEW_TEXTS} probe texts."
    )


class TraitPreviewOut(BaseModel):
    scores: list[float] = Field(description="The zero-shot score of each probe text, in order.")
    positive_texts: list[str] = Field(description="The pole texts the positive end of the axis comes from.")
    negative_texts: list[str]
    embedder: str
