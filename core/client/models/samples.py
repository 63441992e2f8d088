"""A labelled sample: the strict input row, the stored sample, and the report of a bulk import."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from core.client.models.base import _Input, _Response
from core.contract import (
    ANNOTATOR_RE,
    MAX_SOURCE_ID_CHARS,
    MAX_TEXT_CHARS,
    InputProvenance,
    source_id_text,
    text_too_long_message,
)
from core.json_types import JsonObject


class SampleInput(_Input):
    trait: Annotated[str, Field(min_length=1)]
    text: str
    quality: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
    source_url: str | None = None
    #: Who gave the label (an external rater); None: the key's own annotator name.
    annotator: str | None = None
    #: A reviewer's vote that settles the text (decides its pole; the other votes stay).
    adjudicated: bool = False
    #: The id of the sample's row in the file it came from (a number becomes its text: 17.0 is "17").
    source_id: Annotated[str | None, Field(max_length=MAX_SOURCE_ID_CHARS)] = None
    #: `imported`: a row of a file, not the sender's vote (the file's rater's, or nobody's); None: `authored`.
    provenance: InputProvenance | None = None
    #: The extra columns of the row to keep beside the text (strings, numbers, true/false or null).
    metadata: JsonObject | None = None

    @field_validator("source_id", mode="before")
    @classmethod
    def _id_as_text(cls, v: object) -> object:
        return v if isinstance(v, str) and v.strip() else source_id_text(v)

    @field_validator("annotator", mode="before")
    @classmethod
    def _annotator_rule(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
            return None
        if isinstance(v, float) and v.is_integer():
            v = int(v)  # a CSV's rater-id column with gaps reads as floats: 17.0 is rater 17
        v = str(v) if isinstance(v, int) and not isinstance(v, bool) else v
        if isinstance(v, str) and not ANNOTATOR_RE.match(v.strip()):
            raise PydanticCustomError(
                "invalid_annotator",
                "annotator must be 1-64 ASCII letters, digits, '.', '_', '@' and '-', starting with a letter "
                "or digit",
            )
        return v

    @field_validator("trait", mode="before")
    @classmethod
    def _trait_given(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
            raise PydanticCustomError("missing", "trait is missing: give one of the model's trait keys")
        return v

    @field_validator("text", mode="before")
    @classmethod
    def _missing_text_is_empty(cls, v: object) -> object:
        # An empty grid cell or CSV field arrives as None or NaN: it is an empty text, not a type error.
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v

    @field_validator("text")
    @classmethod
    def _text_rule(cls, v: str) -> str:
        # The service's rule and words (codes empty_text / text_too_long), checked on the trimmed text.
        if not v:
            raise PydanticCustomError("empty_text", "text is empty")
        if len(v) > MAX_TEXT_CHARS:
            raise PydanticCustomError("text_too_long", text_too_long_message(len(v)))
        return v

    @field_validator("quality", mode="before")
    @classmethod
    def _no_bool_or_nan(cls, v: object) -> object:
        # bool is an int subclass and pandas turns empty cells into NaN: both are data mistakes
        if isinstance(v, bool):
            raise PydanticCustomError("invalid_quality", "quality must be a number in [0, 1], not a boolean")
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise PydanticCustomError("missing", "quality is missing: give a number in [0, 1]")
        return v

    @field_validator("source_url", mode="before")
    @classmethod
    def _blank_url_is_none(cls, v: object) -> object:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, str) and not v.strip():
            return None
        return v


class Sample(_Response):
    id: int
    trait: str
    text: str
    quality: float
    point: int | None = None  # the point of its trait's scale the quality lies on; None: a pole trait's
    provenance: str = "authored"
    source_url: str | None = None
    content_sha256: str | None = None
    created_at: datetime | None = None
    annotator: str | None = None  # who gave it; None: machine-made, or stored before annotators
    adjudicated: bool = False
    source_id: str | None = None  # the id of its row in the file it came from; None: none given
    source: str | None = (
        None  # a synthesized sample's origin: "pool" (a real text), "generator" or "template"
    )
    generator_model: str | None = None  # the generator's model that wrote a "generator" sample
    metadata: JsonObject | None = None  # the extra columns of its row, kept beside the text


class RowError(_Response):
    """One sample row that was not stored, and why."""

    index: int  # position in the input iterable
    row: Any  # Any: the row as the caller gave it
    message: str
    stage: str = "local"  # "local" (failed validation here) or "server" (rejected by the service)


class Duplicate(_Response):
    """An input row that stored nothing: an identical sample (same trait, text, quality, annotator and
    adjudication) was stored already, before the import or from an earlier row of it."""

    index: int  # position in the input iterable
    id: int  # the stored sample it repeats


#: Refused rows `print(report)` shows; `report.errors` holds them all.
SHOWN_ERRORS = 5


class ImportReport(_Response):
    """What an import did with each input row: `total` = `stored` + `len(duplicates)` + `len(errors)`."""

    total: int = 0
    # The sample id of each row accepted (stored or a duplicate), in input order; a duplicate's is the id of
    # the sample it repeats.
    ids: list[int] = Field(default_factory=list)
    duplicates: list[Duplicate] = Field(default_factory=list)  # accepted rows that stored nothing
    errors: list[RowError] = Field(default_factory=list)
    batches: int = 0
    # Accepted rows whose text is in the model's evaluation set: stored, but no longer held out.
    in_evaluation_set: int = 0

    @property
    def stored(self) -> int:
        """The rows the model gained (duplicates of stored samples not counted)."""
        return len(self.ids) - len(self.duplicates)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def invalid(self) -> list[RowError]:
        return [e for e in self.errors if e.stage == "local"]

    @property
    def rejected(self) -> list[RowError]:
        return [e for e in self.errors if e.stage == "server"]

    def __repr__(self) -> str:
        # `stored`, not `ids`: the ids of duplicates answer for rows that stored nothing.
        return (
            f"ImportReport(total={self.total}, stored={self.stored}, duplicates={len(self.duplicates)}, "
            f"errors={len(self.errors)}, batches={self.batches}, in_evaluation_set={self.in_evaluation_set})"
        )

    def __str__(self) -> str:
        # What `print(report)` shows: the counts and the first rows refused with why, never every stored id
        # (pydantic's str lists every field in full).
        lines = [repr(self)]
        lines += [f"  row {e.index}: {e.message}" for e in self.errors[:SHOWN_ERRORS]]
        if len(self.errors) > SHOWN_ERRORS:
            lines.append(f"  … and {len(self.errors) - SHOWN_ERRORS} more in report.errors")
        return "\n".join(lines)


class Settled(_Response):
    """`POST …/settle`: the settling vote's sample id and who settled."""

    handle: str
    id: int
    trait: str
    settled_by: str
