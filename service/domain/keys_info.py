"""The caller's own metadata: a key's scope, namespaces and prefix (never its secret or hash), or a person's
identity and roles."""

from __future__ import annotations

from typing import cast, get_args

from core.contract import ROLE_ACTIONS, ROLES, Action, KeyScope, Role, annotator_of
from service.domain.needs import Databases
from service.errors import ApiError
from service.schemas.keys_info import KeyInfo, SignedOut
from service.store import audit
from service.store.api_keys import Principal
from service.store.audit import SERVICE
from service.store.db import transaction
from service.store.schema import ApiKey, Person, utcnow
from service.store.sessions import sign_out as end_sessions


def current_key(ctx: Databases, who: Principal) -> KeyInfo:
    if who.person_id is not None:
        return _current_person(ctx, who, who.person_id)
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
            roles=dict(who.roles),
            actions=_actions(cast(Role, row.role)) if row.scope == "authoring" else [],
        )


def _actions(role: Role) -> list[Action]:
    order: tuple[Action, ...] = get_args(Action)
    return sorted(ROLE_ACTIONS[role], key=order.index)


def _current_person(ctx: Databases, who: Principal, person_id: int) -> KeyInfo:
    """A signed-in person: who they are, and their role in each namespace (none: not a member anywhere,
    and then `role` is `annotator`, the least, though they may do nothing until an owner adds them)."""
    with ctx.reads() as session:
        row = session.get(Person, person_id)
        if row is None:  # cannot happen: people rows are never deleted
            raise ApiError(401, "unauthorized", "Sign in again.", headers={"WWW-Authenticate": "Bearer"})
        highest: Role = max(who.roles.values(), key=ROLES.index, default=ROLES[0])
        return KeyInfo(
            prefix="",
            scope="authoring",
            namespaces=sorted(who.namespaces),
            created_at=row.created_at,
            name=who.annotator,
            role=highest,
            kind="person",
            roles=dict(who.roles),
            actions=_actions(highest) if who.roles else [],
            # Who they are here: the name their labels carry. A token's email can change (a renamed account
            # at the provider shows another person's address); it binds nothing once they have a name.
            email=row.name,
            display_name=row.display_name,
        )


def sign_out(ctx: Databases, who: Principal) -> SignedOut:
    """End the calling person's sign-in everywhere: their ID tokens issued until now are refused. A key
    does not sign out (403): the operator revokes it."""
    if who.person_id is None:
        raise ApiError(
            403,
            "forbidden",
            "Only a person signed in through the identity provider signs out; an API key is revoked by the "
            "operator.",
        )
    with transaction(ctx.sessions) as session:
        row = session.get(Person, who.person_id)
        if row is None:  # cannot happen: people rows are never deleted
            raise ApiError(401, "unauthorized", "Sign in again.", headers={"WWW-Authenticate": "Bearer"})
        ended = end_sessions(row, utcnow())
        for namespace in sorted(who.roles) or [SERVICE]:  # where their sign-ins are (service/http/signins.py)
            audit.record(session, who, "signed_out", namespace, None, {"signed_out_at": ended.isoformat()})
        return SignedOut(signed_out_at=ended)
