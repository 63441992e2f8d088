"""Zero-shot preview of a trait being written: its pole labels' scores on a few probe texts (addition)."""

from __future__ import annotations

from fastapi import APIRouter

from service.domain import preview
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.preview import TraitPreviewIn, TraitPreviewOut

router = APIRouter(tags=["traits"])


@router.post("/models/{handle}/traits/preview", response_model=TraitPreviewOut, responses=errors(403, 404))
def preview_trait(handle: str, payload: TraitPreviewIn, who: AuthoringKey, ctx: CtxDep) -> TraitPreviewOut:
    return preview.preview_trait(ctx, who, handle, payload)
