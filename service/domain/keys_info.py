"""The calling key's own metadata (scope, namespaces, prefix), never its secret or hash."""

from __future__ import annotations

from typing import cast

from core.contract import KeyScope, Role, annotator_of
from service.domain.needs import Databases
from service.errors import ApiError
from service.schemas.keys_info import KeyInfo
from service.store.api_keys import Principal
from service.store.tables import ApiKey


def current_key(ctx: Databases, who: Principal) -> KeyInfo:
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
            name=annotator_of(row.name, row.prefix),
            role=cast(Role, row.role),
        )
