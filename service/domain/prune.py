"""Auto-prune policy (spec 2.6): drop old unnamed versions, never the active or a tagged one."""

from __future__ import annotations

from typing import TypedDict

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.json_types import JsonObject
from service.store.schema import Model, Tag, Version


class Policy(TypedDict):
    keep_unnamed: int  # the newest unnamed versions kept
    keep_first_of_month: bool  # and each month's first version


DEFAULT_POLICY: Policy = {"keep_unnamed": 100, "keep_first_of_month": True}


def effective_policy(override: JsonObject | None) -> Policy:
    """The defaults, with each field a model's stored override sets (a null sets nothing)."""
    stored = override or {}
    keep_unnamed, keep_first = stored.get("keep_unnamed"), stored.get("keep_first_of_month")
    return {
        "keep_unnamed": DEFAULT_POLICY["keep_unnamed"] if keep_unnamed is None else keep_unnamed,
        "keep_first_of_month": DEFAULT_POLICY["keep_first_of_month"] if keep_first is None else keep_first,
    }


def prune(session: Session, model: Model) -> list[int]:
    """Delete the versions the policy does not keep; returns their numbers."""
    policy = effective_policy(model.auto_prune)
    versions = session.scalars(
        select(Version).where(Version.model_id == model.id).order_by(Version.version_no.desc())
    ).all()
    tagged = set(session.scalars(select(Tag.version_id).where(Tag.model_id == model.id)))
    protected = tagged | {model.current_version_id}
    unnamed = [v for v in versions if v.id not in protected]
    keep = {v.id for v in unnamed[: int(policy["keep_unnamed"])]}
    if policy["keep_first_of_month"]:
        first: dict[tuple[int, int], Version] = {}
        for v in versions:  # newest first, so the last one seen per month is the month's first
            first[(v.created_at.year, v.created_at.month)] = v
        keep |= {v.id for v in first.values()}
    doomed = [v for v in unnamed if v.id not in keep]
    if doomed:
        session.execute(delete(Version).where(Version.id.in_([v.id for v in doomed])))
    return sorted(v.version_no for v in doomed)
