"""The calling key's own metadata: scope, namespaces, prefix (never the secret or its hash)."""

from __future__ import annotations

from fastapi import APIRouter

from service.domain import keys_info
from service.http.auth import AnyKey, CtxDep
from service.routes.common import errors
from service.schemas.keys_info import KeyInfo

router = APIRouter(tags=["keys"])


@router.get("/keys/current", response_model=KeyInfo, responses=errors())
def current_key(who: AnyKey, ctx: CtxDep) -> KeyInfo:
    """What the calling key may do: lets a client offer the key's namespaces instead of asking for one."""
    return keys_info.current_key(ctx, who)
