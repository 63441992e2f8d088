"""A model's labelling guidelines, versioned (`routes/guidelines.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.contract import MAX_GUIDELINES_CHARS, MAX_GUIDELINES_NOTE_CHARS
from service.schemas.common import JsonInt, Strict


class GuidelinesIn(Strict):
    markdown: str = Field(max_length=MAX_GUIDELINES_CHARS, description="The whole guidelines, in Markdown.")
    note: str = Field(
        default="", max_length=MAX_GUIDELINES_NOTE_CHARS, description="What this version changed."
    )


class GuidelinesVersionOut(BaseModel):
    version_no: int
    markdown: str
    note: str
    author: str = Field(description="Who saved this version (their annotator name).")
    created_at: datetime
    lines_added: int = Field(description="Lines of this version not in the one before.")
    lines_removed: int = Field(description="Lines of the version before not in this one.")


class GuidelinesOut(BaseModel):
    handle: str
    version_no: int = Field(description="The current version; 0: the model has no guidelines yet.")
    markdown: str
    note: str
    author: str | None
    created_at: datetime | None
    read_version_no: int = Field(description="The newest version the caller said they read; 0: none.")
    changed_since_read: bool = Field(
        description="The guidelines have a version newer than the one the caller last read."
    )


class GuidelinesPage(BaseModel):
    handle: str
    items: list[GuidelinesVersionOut] = Field(description="Newest first.")
    limit: int
    next_cursor: str | None


class GuidelinesReadIn(Strict):
    version_no: JsonInt = Field(ge=1, description="The version the caller read (as shown to them).")
