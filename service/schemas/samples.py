"""Samples: labelled texts, imported, listed, edited and deleted (`routes/samples.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

from core.contract import (
    ANNOTATOR_PATTERN,
    ANNOTATOR_RE,
    MAX_ANNOTATOR_CHARS,
    MAX_SAMPLES_PER_REQUEST,
    MAX_SOURCE_ID_CHARS,
    MAX_URL_CHARS,
    InputProvenance,
    Provenance,
)
from core.json_types import JsonObject
from service.schemas.common import Metadata, Quality, Strict, Text, TraitRef


def check_annotator(value: str) -> str:
    if not ANNOTATOR_RE.match(value):
        raise PydanticCustomError(
            "invalid_annotator",
            f"an annotator is 1-{MAX_ANNOTATOR_CHARS} ASCII letters, digits, '.', '_', '@' and '-', "
            "starting with a letter or digit",
        )
    return value


# Checked by check_annotator as a whole string (a Field pattern would let a trailing newline through).
Annotator = Annotated[
    str,
    Field(max_length=MAX_ANNOTATOR_CHARS, json_schema_extra={"pattern": ANNOTATOR_PATTERN, "minLength": 1}),
    AfterValidator(check_annotator),
]
_ANNOTATOR_HELP = (
    "Who gave the label (an external rater's id, for an import of several raters' votes); absent: the "
    "calling key's annotator name. Another key's name → 422 `annotator_reserved`."
)


_SOURCE_ID_HELP = (
    "The id of the sample's row in the file it came from, so an export joins back to that file; stored as "
    "given, not unique."
)


class LabelIn(Strict):
    """A labelled text: a sample, or an evaluation-set item."""

    trait: TraitRef
    text: Text
    quality: Quality
    source_url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    annotator: Annotator | None = Field(default=None, description=_ANNOTATOR_HELP)


class SampleIn(LabelIn):
    adjudicated: bool = Field(
        default=False,
        description="A reviewer's vote that settles the text: its quality decides the text's pole in "
        "training (the other votes stay stored). A sample edit: untrained models only.",
    )
    source_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_SOURCE_ID_CHARS, description=_SOURCE_ID_HELP
    )
    provenance: InputProvenance = Field(
        default="authored",
        description="`imported`: a row of a file import, not the caller's vote: it is stored as the file's "
        "rater's (`annotator`) or as nobody's (absent), and posting it needs the owner role. `authored` "
        "(default): the caller's own label.",
    )
    metadata: Metadata | None = Field(
        default=None,
        description="The extra columns of the row kept beside the text (null: none); a sample stored "
        "before keeps the metadata it has (addition).",
    )


class SamplesIn(Strict):
    samples: list[SampleIn] = Field(min_length=1, max_length=MAX_SAMPLES_PER_REQUEST)


class SampleIds(BaseModel):
    ids: list[int]
    in_evaluation_set: int = Field(
        0, description="How many of the samples are texts of the evaluation set (stored all the same)."
    )
    duplicates: list[int] = Field(
        default_factory=list,
        description="The positions (from 0) of the samples that stored nothing: an identical sample (same "
        "trait, text, quality, annotator and adjudication) was stored before, or earlier in this request; "
        "its id answers for it in `ids`.",
    )


class SampleOut(BaseModel):
    id: int
    trait: str
    text: str
    quality: float
    point: int | None = Field(
        default=None,
        description="The point of its trait's scale the quality lies on; null for a pole trait's label or a "
        "quality between points (addition).",
    )
    provenance: Provenance
    source_url: str | None
    content_sha256: str
    created_at: datetime
    annotator: str | None = Field(
        description="Who gave the label; null for machine-made samples and those stored before annotators"
    )
    adjudicated: bool = Field(description="A reviewer's vote that settles the text")
    source_id: str | None = Field(description=_SOURCE_ID_HELP + " Null when none was given.")
    source: str | None = Field(
        default=None,
        description="Where a synthesized sample's text came from: `pool` (a real text picked from the "
        "model's pool), `generator` (written by the deployment's text generator) or `template` (a built-in "
        "description of the pole); null for other samples.",
    )
    generator_model: str | None = Field(
        default=None,
        description="The model of the text generator that wrote a `source: generator` sample; null for "
        "other samples.",
    )
    metadata: JsonObject | None = Field(
        default=None, description="The extra columns kept beside the text; null: none (addition)."
    )


class SamplePage(BaseModel):
    items: list[SampleOut]
    limit: int
    next_cursor: str | None


class SamplePatch(Strict):
    """A sample's edit: each field optional; null (or absent) leaves it unchanged. Same rules as input."""

    trait: TraitRef | None = None
    text: Text | None = None
    quality: Quality | None = None


class SampleDeleted(BaseModel):
    handle: str
    id: int
    deleted: bool


class SettleIn(Strict):
    """A reviewer's settling vote on a text of a trait: its quality decides the text's pole in training."""

    trait: TraitRef
    text: Text
    quality: Quality


class Settled(BaseModel):
    handle: str
    id: int = Field(description="The settling vote's sample id.")
    trait: str
    settled_by: str
