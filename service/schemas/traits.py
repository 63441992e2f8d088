"""Traits: define, patch and read a model's traits (`routes/traits.py`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from core.contract import (
    MAX_DESCRIPTION_CHARS,
    MAX_LABEL_CHARS,
    MAX_SCALE_POINTS,
    MAX_TRAITS,
    MIN_SCALE_POINTS,
    Aggregation,
    TraitKind,
)
from core.json_types import JsonObject
from service.schemas.common import NOT_BLANK, JsonInt, Strict

Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS, json_schema_extra=NOT_BLANK)]


def _trimmed(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value.strip()


#: A trait's name or a pole's label: a Label, refused when blank and kept trimmed. (A scale's point names
#: are plain Labels: ScaleIn checks them together, so its error names the scale.)
TrimmedLabel = Annotated[Label, AfterValidator(_trimmed)]

_SCALE_HELP = (
    "How people label the trait (addition): null (the default), by its two poles; else a scale of points, "
    "keys 1..N, point k of N stored as quality (k-1)/(N-1). A label keeps its point."
)


def _names_fit(points: int | None) -> JsonDict:
    """A scale of `points` takes that many names (None: or none at all)."""
    if points is None:
        return {"properties": {"names": {"type": "null"}}}
    names: JsonDict = {"type": "array", "minItems": points, "maxItems": points}
    return {"properties": {"points": {"const": points}, "names": names}}


#: The document says what `_one_name_a_point` checks: as many names as points, when names are given.
_NAMES_FIT: JsonDict = {
    "anyOf": [_names_fit(None), *(_names_fit(n) for n in range(MIN_SCALE_POINTS, MAX_SCALE_POINTS + 1))]
}


class ScaleIn(Strict):
    """A rating scale: its number of points, a word for each (lowest first), whether "unsure" is offered."""

    model_config = ConfigDict(json_schema_extra=_NAMES_FIT)

    points: JsonInt = Field(ge=MIN_SCALE_POINTS, le=MAX_SCALE_POINTS)
    names: list[Label] | None = Field(
        default=None,
        description="A word per point, lowest first; absent: the negative pole's label, the middle "
        "points' numbers, the positive pole's label.",
    )
    unsure: bool = Field(
        default=False, description="The Label page offers an Unsure key, which passes a text on unlabelled."
    )

    @model_validator(mode="after")
    def _one_name_a_point(self) -> ScaleIn:
        if self.names is not None:
            self.names = [n.strip() for n in self.names]
            if len(self.names) != self.points or not all(self.names):
                raise ValueError(f"names: one non-blank word for each of the {self.points} points")
        return self


class ScaleOut(BaseModel):
    points: int
    names: list[str]
    unsure: bool


class TraitIn(Strict):
    name: TrimmedLabel
    positive_label: TrimmedLabel
    negative_label: TrimmedLabel
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    aggregation: Aggregation = "mean"
    scale: ScaleIn | None = Field(default=None, description=_SCALE_HELP)


class TraitsIn(Strict):
    traits: list[TraitIn] = Field(min_length=1, max_length=MAX_TRAITS)


class TraitPatch(Strict):
    name: TrimmedLabel | None = None
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    positive_label: TrimmedLabel | None = None
    negative_label: TrimmedLabel | None = None
    aggregation: Aggregation | None = None
    scale: ScaleIn | Literal["poles"] | None = Field(
        default=None,
        description="A new scale, or `poles` to label by the two poles again (addition); null leaves it. "
        "The trait's stored labels keep the point their quality lies on, if any.",
    )


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
    scale: ScaleOut | None = Field(default=None, description=_SCALE_HELP)


class TraitsOut(BaseModel):
    traits: list[TraitOut]
