"""Finding a model's version by `vN` or tag."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, false, select
from sqlalchemy.orm import Session

from core.contract import VERSION_NO_RE
from service.errors import ApiError
from service.tables import Model, Tag, Version

MAX_VERSION_NO = 2**31 - 1  # the version_no column is a 32-bit INTEGER on PostgreSQL


def version_filter(model_id: Any, ref: str) -> ColumnElement[bool]:
    """The condition that picks version `ref` (`vN` or a tag) of model `model_id` (a value or a column)."""
    match = VERSION_NO_RE.match(ref)
    if match:
        number = int(match.group(1))
        if number > MAX_VERSION_NO:  # past any stored number; comparing would overflow the column (500)
            return false()
        return and_(Version.model_id == model_id, Version.version_no == number)
    tagged = select(Tag.version_id).where(Tag.model_id == model_id, Tag.name == ref)
    return Version.id == tagged.scalar_subquery()


def resolve_version(session: Session, model: Model, ref: str) -> Version:
    version = session.scalar(select(Version).where(version_filter(model.id, ref)))
    if version is None:
        raise version_not_found(model.handle, ref)
    return version


def version_not_found(handle: str, ref: str) -> ApiError:
    return ApiError(404, "version_not_found", f"No version {ref!r} of {handle}.")
