"""A labelling team's progress per person and trait, and the export of every vote (`routes/team.py`)."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, Field

from core.contract import Provenance


class PersonTraitOut(BaseModel):
    annotator: str
    trait: str
    labels: int = Field(description="Labels the person gave on the trait (file imports' rows aside)")
    labels_today: int = Field(description="Of those, the ones given on `day` (UTC)")
    unsure: int = Field(description="Texts of the trait the person marked unsure")
    median_seconds: float | None = Field(
        description="Median seconds between consecutive decisions (labels and unsure marks) of the person "
        "on the trait, gaps longer than `session_gap_seconds` left out; null without any"
    )
    compared_others: int = Field(description="Vote pairs with colleagues on shared texts, both on a pole")
    agreement_others: float | None = Field(description="Share of those pairs on the same pole")
    compared_settled: int = Field(description="The person's votes on settled texts, both on a pole")
    agreement_settled: float | None = Field(description="Share of those on the settled pole")
    wanting: int = Field(
        description="Texts wanting votes that the person has neither voted on nor marked unsure"
    )
    points: dict[str, int] | None = Field(
        default=None,
        description='A trait rated on a scale: the person\'s labels per point (`{"1": 3, "4": 7}`, points '
        "with none left out), file imports' rows aside; null for a pole trait (addition).",
    )


class TraitProgressOut(BaseModel):
    texts: int = Field(description="Texts of the trait with at least one counted vote")
    settled: int
    wanting: int = Field(description="Texts still wanting votes (docs/api.md, 'Team progress')")


class TeamProgressOut(BaseModel):
    handle: str
    day: date = Field(description="The UTC day `labels_today` counts")
    session_gap_seconds: float
    votes_wanted: int = Field(description="Votes a text wants before it counts as covered")
    people: list[PersonTraitOut]
    traits: dict[str, TraitProgressOut]


class VoteRecord(BaseModel):
    """One vote of the export: a sample, a buffered feedback label or an unsure mark."""

    kind: str = Field(description="`sample`, `feedback` (buffered, not trained yet) or `unsure`")
    id: int = Field(
        description="The label's id: a sample and a buffered label share one id sequence, and a buffered "
        "label keeps its id when a training folds it in (an unsure mark: the mark's id)"
    )
    annotator: str | None
    trait: str
    text: str
    quality: float | None = Field(description="Null for an unsure mark: it takes no pole")
    point: int | None = Field(
        default=None,
        description="The point of the trait's scale the vote's quality lies on; null for a pole trait's "
        "vote, a quality between points or an unsure mark (addition).",
    )
    adjudicated: bool
    unsure: bool
    created_at: datetime
    provenance: Provenance | None = Field(
        description="A sample's provenance; `feedback` for a buffered label"
    )
    version_no: int | None = Field(
        description="The version whose training took the vote in as it stands (for a vote no training "
        "counts, superseded by its annotator's later vote or of a gold text, the first that read it), null "
        "when none has: pending when a version trained, accepted, corrected or rejected since; always null "
        "for a buffered label or an unsure mark. One's own labels call a label trained exactly then"
    )


class VotesPage(BaseModel):
    handle: str
    items: list[VoteRecord]
    limit: int
    next_cursor: str | None


class CorrectionRecord(BaseModel):
    """A reviewer's correction of one label of the text (addition)."""

    id: int = Field(description="The corrected label's id")
    annotator: str | None = Field(description="Who gave the label")
    before: float = Field(description="The label's quality before the correction")
    after: float = Field(description="The corrected quality")
    corrected_by: str
    comment: str | None
    created_at: datetime


class TextHistory(BaseModel):
    """Every vote of one text of a trait the caller may read, oldest first (addition)."""

    handle: str
    trait: str
    text: str
    items: list[VoteRecord] = Field(
        description="Votes (settling ones `adjudicated`), buffered labels and unsure marks: who, what, when"
    )
    corrections: list[CorrectionRecord] = Field(
        default_factory=list,
        description="Reviewers' corrections of the labels listed, oldest first; a corrected label's item "
        "shows the corrected quality (addition)",
    )
