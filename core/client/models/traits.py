"""A trait: what an author writes (`TraitInput`), what the service answers, a zero-shot preview."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from core.client.models.base import _Input, _Response
from core.contract import (
    AGGREGATIONS,
    MAX_LABEL_CHARS,
    MAX_SCALE_POINTS,
    MIN_SCALE_POINTS,
)
from core.json_types import JsonObject


class TraitScale(_Input):
    """How people rate a trait on a scale (docs/api.md, "Rating scales"): `points` 3-7 (keys 1..N; point k
    is quality (k-1)/(N-1)), a word per point lowest first (absent: the poles' labels at the ends, numbers
    between), and whether the Label page offers an Unsure key."""

    points: Annotated[int, Field(ge=MIN_SCALE_POINTS, le=MAX_SCALE_POINTS)]
    names: list[Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]] | None = None
    unsure: bool = False


class Scale(_Response):
    """A trait's rating scale as the service answers it: every point named."""

    points: int
    names: list[str] = Field(default_factory=list)
    unsure: bool = False


class TraitInput(_Input):
    name: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    positive_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    negative_label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    description: str = ""
    aggregation: str = "mean"
    scale: TraitScale | None = None  # None: labelled by its two poles

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
    scale: Scale | None = None  # None: labelled by its two poles (and from older services)

    def point_name(self, point: int) -> str:
        """The word of a point of its scale, as the pages show it ("4 · rather polite")."""
        names = self.scale.names if self.scale is not None and self.scale.names else []
        word = names[point - 1] if 0 < point <= len(names) else ""
        # A point named by its number (an unnamed middle point's default) reads "3", not "3 · 3".
        return f"{point} · {word}" if word and word != str(point) else str(point)


class TraitPreview(_Response):
    """Zero-shot scores of probe texts for a trait being written (POST …/traits/preview)."""

    scores: list[float] = Field(default_factory=list)
    positive_texts: list[str] = Field(default_factory=list)
    negative_texts: list[str] = Field(default_factory=list)
    embedder: str = ""
