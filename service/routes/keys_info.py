"""The calling key's own metadata: scope, namespaces, prefix (never the secret or its hash)."""

from __future__ import annotations

from fastapi import APIRouter

from service.domain import keys_info
from service.http.auth import AnyKey, CtxDep
from service.routes.common import errors
from service.schemas.keys_info import KeyInfo, SignedOut

router = APIRouter(tags=["keys"])


@router.get("/keys/current", response_model=KeyInfo, responses=errors())
def current_key(who: AnyKey, ctx: CtxDep) -> KeyInfo:
    """What the calling key may do: lets a client offer the key's namespaces instead of asking for one."""
    return keys_info.current_key(ctx, who)


@router.post("/keys/current/sign-out", response_model=SignedOut, responses=errors(403))
def sign_out(who: AnyKey, ctx: CtxDep) -> SignedOut:
    """End the calling person's sign-in in every tab and browser: their ID tokens issued until now are
    refused from now on (a key: 403, the operator revokes keys)."""
    return keys_info.sign_out(ctx, who)
