"""A model's labelling guidelines (docs/api.md "Guidelines"): the owner saves Markdown, each save a new
version (who, when, what changed); each person records the newest version they read, so the Label page can
say when the guidelines changed since."""

from __future__ import annotations

import difflib

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.needs import Databases, Resources
from service.domain.states import require_not_archived
from service.errors import ApiError
from service.schemas.guidelines import (
    GuidelinesIn,
    GuidelinesOut,
    GuidelinesPage,
    GuidelinesReadIn,
    GuidelinesVersionOut,
)
from service.store import audit
from service.store.api_keys import Principal
from service.store.campaign_schema import GuidelinesRead, GuidelinesVersion
from service.store.db import transaction
from service.store.schema import MAX_INT, Model, utcnow


def _newest(s: Session, model_id: int) -> GuidelinesVersion | None:
    return s.scalars(
        select(GuidelinesVersion)
        .where(GuidelinesVersion.model_id == model_id)
        .order_by(GuidelinesVersion.version_no.desc())
        .limit(1)
    ).first()


def _read_by(s: Session, model_id: int, reader: str) -> int:
    query = select(GuidelinesRead.version_no).where(
        GuidelinesRead.model_id == model_id, GuidelinesRead.reader == reader
    )
    return s.scalar(query) or 0


def _current(s: Session, model: Model, reader: str) -> GuidelinesOut:
    newest = _newest(s, model.id)
    read = _read_by(s, model.id, reader)
    return GuidelinesOut(
        handle=model.handle,
        version_no=newest.version_no if newest else 0,
        markdown=newest.markdown if newest else "",
        note=newest.note if newest else "",
        author=newest.author if newest else None,
        created_at=newest.created_at if newest else None,
        read_version_no=read,
        changed_since_read=newest is not None and newest.version_no > read,
    )


def get_guidelines(ctx: Resources, who: Principal, handle: str) -> GuidelinesOut:
    with transaction(ctx.reads) as s:
        return _current(s, load_model(s, who, handle), who.annotator)


def save_guidelines(ctx: Databases, who: Principal, handle: str, payload: GuidelinesIn) -> GuidelinesOut:
    """A new version, unless the Markdown is the current one's (a repeated save is harmless). The saver has
    read what they wrote."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        newest = _newest(s, model.id)
        if newest is None or newest.markdown != payload.markdown:
            number = (newest.version_no if newest else 0) + 1
            s.add(
                GuidelinesVersion(
                    model_id=model.id,
                    version_no=number,
                    markdown=payload.markdown,
                    note=payload.note,
                    author=who.annotator,
                    created_at=utcnow(),
                )
            )
            added, removed = _changed_lines(newest.markdown if newest else "", payload.markdown)
            detail: JsonObject = {"version_no": number, "lines_added": added, "lines_removed": removed}
            audit.record(s, who, "guidelines_changed", model.namespace, model, detail)
            _mark_read(s, model.id, who.annotator, number)
            s.flush()
        return _current(s, model, who.annotator)


def _changed_lines(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) from `before` to `after`."""
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return sum(line.startswith("+ ") for line in diff), sum(line.startswith("- ") for line in diff)


def list_versions(
    ctx: Resources, who: Principal, handle: str, limit: int, cursor: str | None
) -> GuidelinesPage:
    """The versions, newest first, each with what changed from the one before."""
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"guidelines|{model.id}"
        before = ctx.cursors.position(cursor, scope) or MAX_INT
        rows = s.scalars(
            select(GuidelinesVersion)
            .where(GuidelinesVersion.model_id == model.id, GuidelinesVersion.version_no < before)
            .order_by(GuidelinesVersion.version_no.desc())
            .limit(limit + 2)  # one more for the next page, one for the last item's "before"
        ).all()
        page = rows[:limit]
        previous = {r.version_no: r for r in rows}
        for r in page[-1:]:
            if r.version_no - 1 not in previous and r.version_no > 1:
                prior = s.scalar(
                    select(GuidelinesVersion).where(
                        GuidelinesVersion.model_id == model.id,
                        GuidelinesVersion.version_no == r.version_no - 1,
                    )
                )
                if prior is not None:
                    previous[prior.version_no] = prior
        items = []
        for r in page:
            prior = previous.get(r.version_no - 1)
            added, removed = _changed_lines(prior.markdown if prior else "", r.markdown)
            items.append(
                GuidelinesVersionOut(
                    version_no=r.version_no,
                    markdown=r.markdown,
                    note=r.note,
                    author=r.author,
                    created_at=r.created_at,
                    lines_added=added,
                    lines_removed=removed,
                )
            )
    next_cursor = ctx.cursors.encode(scope, page[-1].version_no) if len(rows) > limit else None
    return GuidelinesPage(handle=model.handle, items=items, limit=limit, next_cursor=next_cursor)


def _mark_read(s: Session, model_id: int, reader: str, version_no: int) -> None:
    row = s.scalar(
        select(GuidelinesRead).where(GuidelinesRead.model_id == model_id, GuidelinesRead.reader == reader)
    )
    if row is None:
        s.add(GuidelinesRead(model_id=model_id, reader=reader, version_no=version_no, read_at=utcnow()))
    else:  # reading an older version again keeps the newest read, and says when they last read
        row.version_no, row.read_at = max(row.version_no, version_no), utcnow()


def mark_read(ctx: Databases, who: Principal, handle: str, payload: GuidelinesReadIn) -> GuidelinesOut:
    """Record that the caller read version `version_no` (404 for a version the model does not have)."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")
        newest = s.scalar(
            select(func.max(GuidelinesVersion.version_no)).where(GuidelinesVersion.model_id == model.id)
        )
        if newest is None or payload.version_no > newest:
            raise ApiError(
                404,
                "guidelines_version_not_found",
                f"{model.handle} has no version {payload.version_no} of its guidelines "
                f"(newest: {newest or 0}).",
            )
        _mark_read(s, model.id, who.annotator, payload.version_no)
        s.flush()
        return _current(s, model, who.annotator)
