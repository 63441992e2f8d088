"""A trait: what an author writes (`TraitInput`), what the service answers, a zero-shot preview."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from core.client.models.base import _Input, _Response
from core.contract import (
    AGGREGATIONS,
    MAX_LABEL_CHARS,
)
from core.json_types import JsonObject


class TraitInput(_Input):
    name: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    positive_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    negative_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    description: str = ""
    aggregation: str = "mean"

    @field_validator("aggregation")
    @classmethod
    def _known_aggregation(cls, v: str) -> str:
        if v not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}")
        return v


class Trait(_Response):
    key: str
    name: str
    positive_label: str
    negative_label: str
    description: str | None = ""
    kind: str = "extrinsic"
    aggregation: str | None = None
    sample_count: int = 0
    positive_samples: int = 0
    negative_samples: int = 0
    neutral_samples: int = 0  # quality exactly 0.5: on neither pole (0 from older services)
    discrimination: float = 0.0
    explained_variance: float = 0.0
    anchor_sample_ids: JsonObject = Field(default_factory=dict)
    #: How the active version trained it: "zero_shot", "prior" or "samples"; None before the first train.
    method: str | None = None


class TraitPreview(_Response):
    """Zero-shot scores of probe texts for a trait being written (POST …/traits/preview)."""

    scores: list[float] = Field(default_factory=list)
    positive_texts: list[str] = Field(default_factory=list)
    negative_texts: list[str] = Field(default_factory=list)
    embedder: str = ""
