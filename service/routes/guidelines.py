"""A model's labelling guidelines, versioned (docs/api.md "Guidelines")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import GUIDELINES_PAGE, MAX_CURSOR_CHARS
from service.domain import guidelines
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.guidelines import GuidelinesIn, GuidelinesOut, GuidelinesPage, GuidelinesReadIn

router = APIRouter(tags=["guidelines"])


@router.get("/models/{handle}/guidelines", response_model=GuidelinesOut, responses=errors(403, 404))
def get_guidelines(handle: str, who: AuthoringKey, ctx: CtxDep) -> GuidelinesOut:
    """The current guidelines, and whether they changed since the caller last read them."""
    return guidelines.get_guidelines(ctx, who, handle)


@router.put("/models/{handle}/guidelines", response_model=GuidelinesOut, responses=errors(403, 404, 409))
def save_guidelines(handle: str, payload: GuidelinesIn, who: AuthoringKey, ctx: CtxDep) -> GuidelinesOut:
    """Save the guidelines as a new version (the owner's)."""
    return guidelines.save_guidelines(ctx, who, handle, payload)


@router.get(
    "/models/{handle}/guidelines/versions", response_model=GuidelinesPage, responses=errors(400, 403, 404)
)
def list_guidelines_versions(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    limit: Annotated[int, Query(ge=1, le=GUIDELINES_PAGE.maximum)] = GUIDELINES_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> GuidelinesPage:
    """Every version, newest first: who saved it, when, and what changed."""
    return guidelines.list_versions(ctx, who, handle, limit, cursor)


@router.post("/models/{handle}/guidelines/read", response_model=GuidelinesOut, responses=errors(403, 404))
def mark_guidelines_read(
    handle: str, payload: GuidelinesReadIn, who: AuthoringKey, ctx: CtxDep
) -> GuidelinesOut:
    """Record that the caller read this version of the guidelines."""
    return guidelines.mark_read(ctx, who, handle, payload)
