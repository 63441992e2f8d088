"""Gold items and each person's accuracy on them (`POST|GET /models/{handle}/gold`, `…/gold/accuracy`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from core.client.models.base import _Response


class GoldAdded(_Response):
    """`add_gold` and `promote_gold`: gold items added and the model's total; the positions of the items
    that added nothing (gold already) and of those left out as texts of the evaluation set."""

    handle: str
    added: int = 0
    total: int = 0
    duplicates: list[int] = Field(default_factory=list)
    in_evaluation_set: list[int] = Field(default_factory=list)


class GoldItem(_Response):
    id: int
    trait: str
    text: str
    quality: float  # the known answer
    origin: str  # "imported" or "promoted"
    added_by: str
    created_at: datetime
    answers: int = 0  # people who answered it
    correct: int = 0  # of those, on the known answer's pole


class GoldSet(_Response):
    handle: str
    total: int = 0
    items: list[GoldItem] = Field(default_factory=list)


class GoldDeleted(_Response):
    handle: str
    deleted: int = 0


class GoldPerson(_Response):
    """One person's accuracy on gold: `correct` of `answered`, and its Wilson interval [`low`, `high`];
    `flagged` when even `high` is under the model's `gold_threshold`."""

    annotator: str
    answered: int
    correct: int
    accuracy: float
    low: float
    high: float
    flagged: bool = False


class GoldAccuracy(_Response):
    handle: str
    gold_rate: float = 0.0
    gold_threshold: float = 0.0
    confidence: float = 0.95
    gold_items: int = 0
    people: list[GoldPerson] = Field(default_factory=list)
