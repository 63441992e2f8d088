"""Unsure marks and comments on a model's texts (`routes/notes.py`): notes for reviewers, never votes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

from core.contract import MAX_COMMENT_CHARS
from service.schemas.common import NOT_BLANK, Strict, Text, TraitRef


def _not_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise PydanticCustomError("empty_comment", "a comment must not be blank")
    return stripped


#: Blank in the OpenAPI document as in the check (NOT_BLANK): a lone form feed was schema-valid, then refused.
CommentBody = Annotated[
    str,
    Field(min_length=1, max_length=MAX_COMMENT_CHARS, json_schema_extra=NOT_BLANK),
    AfterValidator(_not_blank),
]


class UnsureIn(Strict):
    trait: TraitRef = Field(description="A trait key or name")
    text: Text


class UnsureOut(BaseModel):
    id: int
    trait: str
    text: str
    annotator: str
    created_at: datetime


class UnsurePage(BaseModel):
    handle: str
    items: list[UnsureOut]
    limit: int
    next_cursor: str | None


class CommentIn(Strict):
    trait: TraitRef = Field(description="A trait key or name")
    text: Text
    body: CommentBody


class CommentOut(BaseModel):
    id: int
    trait: str
    text: str
    author: str
    body: str
    created_at: datetime


class CommentPage(BaseModel):
    handle: str
    items: list[CommentOut]
    limit: int
    next_cursor: str | None


class NoteDeleted(BaseModel):
    handle: str
    id: int
    deleted: bool
