"""Versions: list (metadata), get by vN or tag, tag and untag the active version."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from sqlalchemy import select

from core.contract import TAG_LIKE_VERSION_RE, TAG_RE, VERSIONS_PAGE
from service import history
from service.auth import AnyKey, AuthoringKey, CtxDep
from service.db import transaction
from service.domain.access import load_model
from service.domain.versions import resolve_version
from service.errors import ApiError
from service.routes.common import errors
from service.schemas import (
    Tagged,
    Untagged,
    VersionOut,
    VersionPage,
)
from service.states import require_not_archived
from service.tables import Tag, Version
from service.views import version_out

router = APIRouter(tags=["versions"])
VersionRef = Annotated[str, Path(max_length=80, description="`vN` or a tag name")]


@router.get("/models/{handle}/versions", response_model=VersionPage, responses=errors(400, 404))
def list_versions(
    handle: str,
    who: AnyKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=VERSIONS_PAGE.maximum)] = VERSIONS_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
) -> Any:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"versions|{model.id}"
        before = ctx.cursors.decode(cursor, scope) if cursor else None
        if before is not None and not isinstance(before, int):
            raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.")
        q = select(Version).where(Version.model_id == model.id)
        if before is not None:
            q = q.where(Version.version_no < before)
        rows = s.scalars(q.order_by(Version.version_no.desc()).limit(limit + 1)).all()
        page = rows[:limit]
        items = [version_out(s, v, with_snapshot=False) for v in page]
    next_cursor = ctx.cursors.encode(scope, page[-1].version_no) if len(rows) > limit else None
    return JSONResponse({"items": items, "limit": limit, "next_cursor": next_cursor})


@router.get(
    "/models/{handle}/versions/{ref}",
    response_model=VersionOut,
    responses=errors(404),
    description="`snapshot` is included for authoring keys and omitted for scoring keys.",
)
def get_version(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> Any:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        body = version_out(s, resolve_version(s, model, ref), with_snapshot=who.scope == "authoring")
    return JSONResponse(body)


def check_tag_name(name: str) -> None:
    if not TAG_RE.match(name) or TAG_LIKE_VERSION_RE.match(name):
        raise ApiError(
            422,
            "invalid_tag",
            f"{name!r} is not a valid tag: use [A-Za-z0-9][A-Za-z0-9._-]{{0,63}}, "
            "not 'v<number>' or 'V<number>'.",
        )


@router.post("/models/{handle}/versions/{ref}", response_model=Tagged, responses=errors(403, 404, 409))
def tag_version(handle: str, ref: VersionRef, who: AuthoringKey, ctx: CtxDep) -> Tagged:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        check_tag_name(ref)
        require_not_archived(model)
        if model.current_version_id is None:
            raise ApiError(409, "no_active_version", "The model has no active version to tag yet.")
        tag = s.scalar(select(Tag).where(Tag.model_id == model.id, Tag.name == ref))
        version_no = s.scalar(select(Version.version_no).where(Version.id == model.current_version_id))
        previous = history.version_no_of(s, tag.version_id) if tag is not None else None
        if tag is None:
            s.add(Tag(model_id=model.id, name=ref, version_id=model.current_version_id))
        else:
            tag.version_id = model.current_version_id  # re-using a tag moves the pointer
        if tag is None or previous != version_no:  # re-tagging the same version changes nothing
            history.record(s, model, "tagged", int(version_no or 0), tag=ref, previous=previous)
        return Tagged(handle=model.handle, tag=ref, version_no=int(version_no or 0))


@router.delete("/models/{handle}/versions/{ref}", response_model=Untagged, responses=errors(403, 404, 409))
def untag_version(handle: str, ref: VersionRef, who: AuthoringKey, ctx: CtxDep) -> Untagged:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        check_tag_name(ref)
        require_not_archived(model)
        tag = s.scalar(select(Tag).where(Tag.model_id == model.id, Tag.name == ref))
        if tag is not None:
            history.record(s, model, "untagged", int(history.version_no_of(s, tag.version_id) or 0), tag=ref)
            s.delete(tag)
        return Untagged(handle=model.handle, tag=ref, deleted=tag is not None)
