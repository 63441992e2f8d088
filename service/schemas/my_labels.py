"""One's own labels on a model: list, change, withdraw (`routes/my_labels.py`)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError

from core.contract import ReviewStatus
from core.json_types import JsonObject
from service.schemas.common import Strict

#: Where a label is stored: a sample, or a buffered feedback label waiting for the next version.
LabelKind = Literal["sample", "feedback"]


class MyLabel(BaseModel):
    kind: LabelKind = Field(description="`sample`: a vote among the samples; `feedback`: buffered.")
    id: int = Field(description="The sample's id, or the buffered label's id.")
    trait: str
    text: str
    quality: float
    created_at: datetime = Field(description="When the label was given (an edit keeps it).")
    review: ReviewStatus
    adjudicated: bool = Field(description="A vote that settled the text.")
    trained: bool = Field(
        description="Trained into a version: it was stored when the training of the model's newest version "
        "started. A trained label can no longer be changed or withdrawn (409 `label_trained`)."
    )
    metadata: JsonObject | None = Field(default=None, description="The extra columns kept beside the text.")


class MyLabelPage(BaseModel):
    handle: str
    items: list[MyLabel] = Field(description="Newest first.")
    limit: int
    next_cursor: str | None
    total: int = Field(description="The caller's labels on the model that match the filters, on every page.")


class MyLabelPatch(Strict):
    quality: float = Field(ge=0.0, le=1.0)

    @field_validator("quality")
    @classmethod
    def _quality(cls, value: float) -> float:
        if math.isnan(value):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1]")
        return value


class MyLabelWithdrawn(BaseModel):
    handle: str
    kind: LabelKind
    id: int
    deleted: bool
