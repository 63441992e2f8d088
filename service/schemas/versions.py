"""Versions and their tags (`routes/versions.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.contract import MAX_VERSION_REF_CHARS, VersionTrigger
from core.json_types import JsonObject
from service.schemas.common import Strict


class VersionOut(BaseModel):
    version_id: int
    version_no: int
    triggered_by: VersionTrigger
    param_hash: str
    sample_count: int
    created_at: datetime
    run_id: str | None
    metrics: JsonObject
    tags: list[str]
    snapshot: JsonObject | None = Field(default=None, description="Omitted for scoring-scope keys.")


class VersionPage(BaseModel):
    items: list[VersionOut]
    limit: int
    next_cursor: str | None


class TagIn(Strict):
    """Optional body of `POST …/versions/{tag}` (addition): the version to tag; absent, the active one."""

    version: str | None = Field(
        default=None,
        max_length=MAX_VERSION_REF_CHARS,
        description="`vN` or a tag; default: the active version",
    )


class Tagged(BaseModel):
    handle: str
    tag: str
    version_no: int


class Untagged(BaseModel):
    handle: str
    tag: str
    deleted: bool
