"""A model's versions: find one by `vN` or tag, list them, read one, and tag or untag the active one."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, false, select
from sqlalchemy.orm import QueryableAttribute, Session

from core.contract import TAG_LIKE_VERSION_RE, TAG_PATTERN, TAG_RE, VERSION_NO_RE
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.needs import Databases, Resources
from service.domain.states import require_not_archived
from service.domain.views import version_out
from service.errors import ApiError
from service.schemas.versions import Tagged, Untagged
from service.store import audit, history
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.schema import MAX_INT, Model, Tag, Version


def version_filter(model_id: int | QueryableAttribute[int], ref: str) -> ColumnElement[bool]:
    """The condition that picks version `ref` (`vN` or a tag) of model `model_id` (a value or a column)."""
    match = VERSION_NO_RE.match(ref)
    if match:
        number = int(match.group(1))
        if number > MAX_INT:  # past any stored number; comparing would overflow the column (500)
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


def list_versions(
    ctx: Resources,
    who: Principal,
    handle: str,
    limit: int,
    cursor: str | None,
) -> JsonObject:
    """A page of versions, newest first, without snapshots."""
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"versions|{model.id}"
        before = ctx.cursors.position(cursor, scope)
        q = select(Version).where(Version.model_id == model.id)
        if before is not None:
            q = q.where(Version.version_no < before)
        rows = s.scalars(q.order_by(Version.version_no.desc()).limit(limit + 1)).all()
        page = rows[:limit]
        items = [version_out(s, v, with_snapshot=False) for v in page]
    next_cursor = ctx.cursors.encode(scope, page[-1].version_no) if len(rows) > limit else None
    return {"items": items, "limit": limit, "next_cursor": next_cursor}


def get_version(ctx: Databases, who: Principal, handle: str, ref: str) -> JsonObject:
    """One version; its snapshot for authoring keys only."""
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        return version_out(s, resolve_version(s, model, ref), with_snapshot=who.scope == "authoring")


def check_tag_name(name: str) -> None:
    if not TAG_RE.match(name) or TAG_LIKE_VERSION_RE.match(name):
        raise ApiError(
            422,
            "invalid_tag",
            f"{name!r} is not a valid tag: use {TAG_PATTERN}, not 'v<number>' or 'V<number>'.",
        )


def tag_version(ctx: Databases, who: Principal, handle: str, name: str, ref: str | None = None) -> Tagged:
    """Point tag `name` at the active version, or at version `ref` (`vN` or a tag; an addition to the spec's
    route), re-using a tag moves it."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        check_tag_name(name)
        require_not_archived(model)
        if ref is not None:
            target = resolve_version(s, model, ref)
            version_id, version_no = target.id, target.version_no
        elif model.current_version_id is None:
            raise ApiError(409, "no_active_version", "The model has no active version to tag yet.")
        else:
            version_id = model.current_version_id
            version_no = s.scalar(select(Version.version_no).where(Version.id == version_id)) or 0
        tag = s.scalar(select(Tag).where(Tag.model_id == model.id, Tag.name == name))
        previous = history.version_no_of(s, tag.version_id) if tag is not None else None
        if tag is None:
            s.add(Tag(model_id=model.id, name=name, version_id=version_id))
        else:
            tag.version_id = version_id
        if tag is None or previous != version_no:  # re-tagging the same version changes nothing
            history.record(s, model, "tagged", int(version_no or 0), tag=name, previous=previous)
            moved: JsonObject = {"tag": name, "version_no": int(version_no or 0), "previous": previous}
            audit.record(s, who, "tag_moved", model.namespace, model, moved)
        return Tagged(handle=model.handle, tag=name, version_no=int(version_no or 0))


def untag_version(ctx: Databases, who: Principal, handle: str, name: str) -> Untagged:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        check_tag_name(name)
        require_not_archived(model)
        tag = s.scalar(select(Tag).where(Tag.model_id == model.id, Tag.name == name))
        if tag is not None:
            previous = int(history.version_no_of(s, tag.version_id) or 0)
            history.record(s, model, "untagged", previous, tag=name)
            moved = {"tag": name, "version_no": None, "previous": previous}
            audit.record(s, who, "tag_moved", model.namespace, model, moved)
            s.delete(tag)
        return Untagged(handle=model.handle, tag=name, deleted=tag is not None)
