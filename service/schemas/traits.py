"""Traits: define, patch and read a model's traits (`routes/traits.py`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from core.contract import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS, MAX_TRAITS, Aggregation, TraitKind
from core.json_types import JsonObject
from service.schemas.common import NOT_BLANK, Strict

Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK)]


class TraitIn(Strict):
    name: str = Field(min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK)
    positive_label: Label
    negative_label: Label
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    aggregation: Aggregation = "mean"

    @field_validator("name", "positive_label", "negative_label")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class TraitsIn(Strict):
    traits: list[TraitIn] = Field(min_length=1, max_length=MAX_TRAITS)


class TraitPatch(Strict):
    name: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK
    )
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    positive_label: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK
    )
    negative_label: str | None = Field(
        default=None, min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK
    )
    aggregation: Aggregation | None = None

    @field_validator("name", "positive_label", "negative_label")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value.strip() if value is not None else None


class AnchorIds(BaseModel):
    positive: list[int] = []
    negative: list[int] = []


class TraitOut(BaseModel):
    key: str
    name: str
    positive_label: str
    negative_label: str
    sample_count: int
    positive_samples: int
    negative_samples: int
    #: Samples of quality exactly 0.5: on neither pole, so in neither count above (addition).
    neutral_samples: int = 0
    description: str
    kind: TraitKind
    aggregation: Aggregation
    discrimination: float
    explained_variance: float
    anchor_sample_ids: AnchorIds | JsonObject
    #: How the active version trained this trait: from its pole labels alone (`zero_shot`), from samples
    #: pulled toward its labels (`prior`) or from samples alone (`samples`); null when not trained.
    method: Literal["zero_shot", "prior", "samples"] | None = None


class TraitsOut(BaseModel):
    traits: list[TraitOut]
