"""A model's version history (`routes/history.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

EventKind = Literal["activated", "tagged", "untagged", "reopened"]


class HistoryEvent(BaseModel):
    at: datetime
    kind: EventKind
    version_no: int
    tag: str | None = None
    previous_version_no: int | None = None


class HistoryOut(BaseModel):
    handle: str
    events: list[HistoryEvent]
