"""Who is in a namespace, with what role: listed, added, changed and removed by the namespace's owners
(an owner key, or a person who is an owner there). A namespace that has an owner never loses its last one."""

from __future__ import annotations

from service.domain.access import require_role
from service.domain.needs import Databases
from service.errors import ApiError
from service.schemas.people import MemberIn, MemberOut, MemberPage, MemberRemoved
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.people import (
    LastOwner,
    MemberRow,
    NotAMember,
    SameAccount,
    check_namespace,
    list_members,
    normal_member,
    remove_member,
    set_member,
)


def _require_owner(who: Principal, namespace: str) -> None:
    try:
        check_namespace(namespace)
    except ValueError as exc:
        raise _invalid("namespace", str(exc)) from None
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", "This operation needs an authoring key.")
    require_role(who, "manage", namespace)


def _invalid(where: str, message: str) -> ApiError:
    return ApiError(
        422,
        "validation_error",
        f"path.{where}: {message}",
        details=[{"loc": ["path", where], "msg": message, "type": "value_error"}],
    )


def _member(member: str) -> str:
    try:
        return normal_member(member)
    except ValueError as exc:
        raise _invalid("member", str(exc)) from None


def _out(row: MemberRow) -> MemberOut:
    return MemberOut(
        namespace=row.namespace,
        member=row.member,
        role=row.role,
        email=row.email,
        display_name=row.display_name,
        signed_in=row.signed_in,
    )


def list_people(ctx: Databases, who: Principal, namespace: str) -> MemberPage:
    _require_owner(who, namespace)
    with ctx.reads() as session:
        return MemberPage(items=[_out(r) for r in list_members(session, namespace)])


def set_person(ctx: Databases, who: Principal, namespace: str, member: str, payload: MemberIn) -> MemberOut:
    _require_owner(who, namespace)
    member = _member(member)
    try:
        with transaction(ctx.sessions) as session:
            row, _old = set_member(session, namespace, member, payload.role, who)
    except LastOwner as exc:
        raise ApiError(409, "last_owner", str(exc)) from None
    except SameAccount as exc:
        raise ApiError(409, "already_member", str(exc)) from None
    except ValueError as exc:  # an API key's name: no person may have it
        raise _invalid("member", str(exc)) from None
    return _out(row)


def remove_person(ctx: Databases, who: Principal, namespace: str, member: str) -> MemberRemoved:
    _require_owner(who, namespace)
    member = _member(member)
    try:
        with transaction(ctx.sessions) as session:
            old = remove_member(session, namespace, member, who)
    except LastOwner as exc:
        raise ApiError(409, "last_owner", str(exc)) from None
    except NotAMember as exc:
        raise ApiError(404, "member_not_found", str(exc)) from None
    return MemberRemoved(namespace=namespace, member=member, role=old)
