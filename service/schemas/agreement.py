"""Annotators' agreement on a model's traits (`routes/agreement.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.json_types import JsonObject


class AnnotatorVotes(BaseModel):
    annotator: str
    votes: int = Field(description="Counted votes of the annotator on the trait (adjudications aside)")


class PairAgreement(BaseModel):
    a: str
    b: str
    texts: int = Field(description="Texts both annotators voted on")
    same_pole: int = Field(description="Of those, the texts where their votes fall on the same pole")
    agreement: float = Field(description="same_pole / texts")


class VoteOut(BaseModel):
    annotator: str | None
    quality: float
    sample_id: int | None = Field(
        description="The sample holding the vote; null for a buffered feedback label"
    )
    adjudicated: bool = False


class DisagreedText(BaseModel):
    text: str
    votes: list[VoteOut]
    quality: float = Field(description="The counted quality (the adjudicated vote's, else the votes' mean)")
    contested: bool = Field(description="Votes on both poles and not adjudicated")
    adjudicated: bool
    metadata: JsonObject | None = Field(
        default=None, description="The extra columns kept beside the text; null: none (addition)."
    )


class TraitAgreementOut(BaseModel):
    texts_with_votes: int = Field(description="Texts with at least 2 counted votes of annotators")
    annotators: list[AnnotatorVotes]
    krippendorff_alpha_interval: float | None
    krippendorff_alpha_nominal: float | None
    krippendorff_alpha_ordinal: float | None = Field(
        default=None,
        description="A trait rated on a scale: Krippendorff's alpha at the ordinal level over its points; "
        "null for a pole trait (addition).",
    )
    pairwise: list[PairAgreement]
    disagreed: list[DisagreedText]


class AgreementOut(BaseModel):
    handle: str
    traits: dict[str, TraitAgreementOut]
    stored_at: datetime | None = Field(
        default=None,
        description="Zero-data-retention: when the numbers were kept, just before the votes were purged "
        "(`disagreed` is then empty); null when computed from the stored votes now.",
    )
