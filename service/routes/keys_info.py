"""The calling key's own metadata: scope, namespaces, prefix (never the secret or its hash)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from fastapi import APIRouter
from pydantic import BaseModel, Field

from core.contract import KeyScope
from service.auth import AnyKey, CtxDep
from service.errors import ApiError
from service.routes.common import errors
from service.tables import ApiKey

router = APIRouter(tags=["keys"])


class KeyInfo(BaseModel):
    prefix: str = Field(description="The lookup part of the key (`sk_<prefix>_…`); safe to show")
    scope: KeyScope
    namespaces: list[str] = Field(description="Namespaces the key owns, sorted (`public` is readable by all)")
    created_at: datetime


@router.get("/keys/current", response_model=KeyInfo, responses=errors())
def current_key(who: AnyKey, ctx: CtxDep) -> KeyInfo:
    """What the calling key may do: lets a client offer the key's namespaces instead of asking for one."""
    with ctx.reads() as session:
        row = session.get(ApiKey, who.key_id)
        if row is None:  # revoked and deleted between authentication and this read
            raise ApiError(
                401, "unauthorized", "The API key is not valid.", headers={"WWW-Authenticate": "Bearer"}
            )
        return KeyInfo(
            prefix=row.prefix,
            scope=cast(KeyScope, row.scope),
            namespaces=sorted(row.namespaces),
            created_at=row.created_at,
        )
