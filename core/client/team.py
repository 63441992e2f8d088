"""A labelling team's answers (docs/api.md, "Team progress", "Unsure and comments"), and the vote export's
two file formats.

Responses accept unknown fields, as every answer of the client does (core/client/models/base.py).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from datetime import datetime

from core.client.models.base import Page, _Response
from core.spreadsheet import guarded_rows

#: The export's columns, in order (CSV header; JSONL keys).
VOTE_COLUMNS = (
    "annotator",
    "trait",
    "text",
    "quality",
    "point",  # the point of a trait rated on a scale
    "unsure",
    "adjudicated",
    "created_at",
    "provenance",
    "version_no",
    "kind",
    "id",
)


class PersonProgress(_Response):
    """One person's progress on one trait (`GET …/team`)."""

    annotator: str
    trait: str
    labels: int = 0
    labels_today: int = 0
    unsure: int = 0
    median_seconds: float | None = None
    compared_others: int = 0
    agreement_others: float | None = None
    compared_settled: int = 0
    agreement_settled: float | None = None
    wanting: int = 0
    points: dict[str, int] | None = None  # a trait rated on a scale: labels per point ("1".."N"); else None


class TraitProgress(_Response):
    texts: int = 0
    settled: int = 0
    wanting: int = 0


class TeamProgress(_Response):
    handle: str
    day: str | None = None  # the UTC day `labels_today` counts (ISO date)
    session_gap_seconds: float | None = None
    votes_wanted: int = 1
    people: list[PersonProgress] = []
    traits: dict[str, TraitProgress] = {}


class VoteRecord(_Response):
    """One vote of the export: a sample, a buffered feedback label or an unsure mark (`kind`)."""

    kind: str
    id: int
    annotator: str | None = None
    trait: str
    text: str
    quality: float | None = None
    point: int | None = None  # the point of the trait's scale; None for a pole trait's vote or unsure mark
    adjudicated: bool = False
    unsure: bool = False
    created_at: datetime | None = None
    provenance: str | None = None
    version_no: int | None = None


class VotesPage(Page[VoteRecord]):
    handle: str | None = None


class Correction(_Response):
    """A reviewer's correction of label `id`: its quality `before` (as its annotator gave it, for the first
    correction) and `after` (what training reads)."""

    id: int
    annotator: str | None = None
    before: float
    after: float
    corrected_by: str
    comment: str | None = None
    created_at: datetime | None = None


class TextHistory(_Response):
    """Every vote of one text of a trait the caller may read, oldest first: who voted, settled
    (`adjudicated`) or marked it unsure, what and when; and reviewers' corrections of those labels."""

    handle: str
    trait: str
    text: str
    items: list[VoteRecord] = []
    corrections: list[Correction] = []


class UnsureMark(_Response):
    id: int
    trait: str
    text: str
    annotator: str
    created_at: datetime | None = None


class UnsurePage(Page[UnsureMark]):
    handle: str | None = None


class TextComment(_Response):
    id: int
    trait: str
    text: str
    author: str
    body: str
    created_at: datetime | None = None


class CommentPage(Page[TextComment]):
    handle: str | None = None


def _row(v: VoteRecord) -> dict[str, object]:
    row = v.model_dump(include=set(VOTE_COLUMNS))
    row["created_at"] = v.created_at.isoformat() if v.created_at else None
    return {c: row.get(c) for c in VOTE_COLUMNS}


def votes_csv(votes: Iterable[VoteRecord], *, spreadsheet: bool = False) -> str:
    """The votes as CSV with a header (`VOTE_COLUMNS`); an empty cell for null. `spreadsheet`: cells a
    formula would start with are guarded (core/spreadsheet.py), for a file a person opens."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=VOTE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    rows = ({k: "" if x is None else x for k, x in _row(v).items()} for v in votes)
    writer.writerows(guarded_rows(rows) if spreadsheet else rows)
    return out.getvalue()


def votes_jsonl(votes: Iterable[VoteRecord]) -> str:
    """The votes as JSON Lines: one object a line, keys `VOTE_COLUMNS`."""
    return "".join(json.dumps(_row(v), ensure_ascii=False) + "\n" for v in votes)
