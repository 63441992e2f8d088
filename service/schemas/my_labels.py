"""One's own labels on a model: list, change, withdraw (`routes/my_labels.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from core.contract import MAX_SCALE_POINTS, ReviewStatus
from core.json_types import JsonObject
from service.schemas.common import Quality, Strict, integral

#: Where a label is stored: a sample, or a buffered feedback label waiting for the next version.
LabelKind = Literal["sample", "feedback"]


class MyLabel(BaseModel):
    kind: LabelKind = Field(description="`sample`: a vote among the samples; `feedback`: buffered.")
    id: int = Field(description="The sample's id, or the buffered label's id.")
    trait: str
    text: str
    quality: float
    point: int | None = Field(
        default=None,
        description="The point of its trait's scale the quality lies on; null for a pole trait's label or a "
        "quality between points (addition).",
    )
    created_at: datetime = Field(description="When the label was given (an edit keeps it).")
    review: ReviewStatus
    adjudicated: bool = Field(description="A vote that settled the text.")
    trained: bool = Field(
        description="Trained into a version: a version took it in as it stands (the votes export's "
        "`version_no`). A trained label can no longer be changed or withdrawn (409 `label_trained`)."
    )
    metadata: JsonObject | None = Field(default=None, description="The extra columns kept beside the text.")


class MyLabelPage(BaseModel):
    handle: str
    items: list[MyLabel] = Field(description="Newest first.")
    limit: int
    next_cursor: str | None
    total: int = Field(description="The caller's labels on the model that match the filters, on every page.")


class MyLabelPatch(Strict):
    # One of the two is required (checked by `_a_label`; the document says so): never null when given.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["quality"]}, {"required": ["point"]}]}
    )

    quality: Quality | SkipJsonSchema[None] = Field(
        default=None,
        description="The new label: 0 negative … 1 positive (a trait rated on a scale takes one too, as a "
        "sample edit does).",
    )
    point: (
        Annotated[int, Field(ge=1, le=MAX_SCALE_POINTS), BeforeValidator(integral)] | SkipJsonSchema[None]
    ) = Field(
        default=None,
        description="The new label of a trait rated on a scale (addition): its point 1..N, stored as quality "
        "(point-1)/(N-1), checked as the labelling route checks it (422 `not_a_scale`, "
        "`point_out_of_scale`, `point_quality_mismatch`).",
    )

    @model_validator(mode="after")
    def _a_label(self) -> MyLabelPatch:
        if self.quality is None and self.point is None:
            raise PydanticCustomError("missing_label", "a label is a quality or a point (scale)")
        return self


class MyLabelWithdrawn(BaseModel):
    handle: str
    kind: LabelKind
    id: int
    deleted: bool
