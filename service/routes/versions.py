"""Versions: list (metadata), get by vN or tag, tag (the active version, or the one named) and untag."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from core.contract import MAX_CURSOR_CHARS, MAX_TAG_CHARS, MAX_VERSION_REF_CHARS, VERSIONS_PAGE
from service.domain import versions
from service.http.auth import AnyKey, AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.versions import Tagged, TagIn, Untagged, VersionOut, VersionPage

router = APIRouter(tags=["versions"])
VersionRef = Annotated[str, Path(max_length=MAX_VERSION_REF_CHARS, description="`vN` or a tag name")]


def _within_tag_length(name: object) -> object:
    # Longer than any tag: the tag rule's own code (docs/api.md), not the length bound's validation_error.
    if isinstance(name, str) and len(name) > MAX_TAG_CHARS:
        raise PydanticCustomError("invalid_tag", f"a tag has at most {MAX_TAG_CHARS} characters")
    return name


#: Tagging and untagging: a version reference that is a tag name to set or remove.
TagName = Annotated[VersionRef, BeforeValidator(_within_tag_length)]


@router.get("/models/{handle}/versions", response_model=VersionPage, responses=errors(400, 404))
def list_versions(
    handle: str,
    who: AnyKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=VERSIONS_PAGE.maximum)] = VERSIONS_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> JSONResponse:
    return JSONResponse(versions.list_versions(ctx, who, handle, limit, cursor))


@router.get(
    "/models/{handle}/versions/{ref}",
    response_model=VersionOut,
    responses=errors(404),
    description="`snapshot` is included for authoring keys and omitted for scoring keys.",
)
def get_version(handle: str, ref: VersionRef, who: AnyKey, ctx: CtxDep) -> JSONResponse:
    return JSONResponse(versions.get_version(ctx, who, handle, ref))


# The optional body keeps its OpenAPI title "Body" (FastAPI would title it after the parameter).
@router.post("/models/{handle}/versions/{ref}", response_model=Tagged, responses=errors(403, 404, 409))
def tag_version(
    handle: str,
    ref: TagName,
    who: AuthoringKey,
    ctx: CtxDep,
    payload: TagIn | None = Body(default=None, title="Body"),
) -> Tagged:
    return versions.tag_version(ctx, who, handle, ref, payload.version if payload else None)


@router.delete("/models/{handle}/versions/{ref}", response_model=Untagged, responses=errors(403, 404, 409))
def untag_version(handle: str, ref: TagName, who: AuthoringKey, ctx: CtxDep) -> Untagged:
    return versions.untag_version(ctx, who, handle, ref)
