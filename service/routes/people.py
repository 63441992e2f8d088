"""People in a namespace and their roles: listed, set and removed by the namespace's owners."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from core.contract import MAX_MEMBER_CHARS, MAX_NAMESPACE_CHARS, MEMBER_PATTERN, NAMESPACE_PATTERN
from service.domain import people
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.people import MemberIn, MemberOut, MemberPage, MemberRemoved

router = APIRouter(tags=["people"])
Namespace = Annotated[
    str, Path(max_length=MAX_NAMESPACE_CHARS, pattern=NAMESPACE_PATTERN, description="a namespace")
]
Member = Annotated[
    str,
    Path(
        max_length=MAX_MEMBER_CHARS,
        pattern=MEMBER_PATTERN,
        description="an email, or the person's subject at the provider",
    ),
]


@router.get("/namespaces/{namespace}/people", response_model=MemberPage, responses=errors(403))
def list_people(namespace: Namespace, who: AuthoringKey, ctx: CtxDep) -> MemberPage:
    """Who is in the namespace, with what role (owners only)."""
    return people.list_people(ctx, who, namespace)


@router.put("/namespaces/{namespace}/people/{member}", response_model=MemberOut, responses=errors(403, 409))
def set_person(
    namespace: Namespace, member: Member, payload: MemberIn, who: AuthoringKey, ctx: CtxDep
) -> MemberOut:
    """Add someone to the namespace with a role, or change their role (owners only). 409 `last_owner`
    when it would demote the namespace's last owner."""
    return people.set_person(ctx, who, namespace, member, payload)


@router.delete(
    "/namespaces/{namespace}/people/{member}", response_model=MemberRemoved, responses=errors(403, 404, 409)
)
def remove_person(namespace: Namespace, member: Member, who: AuthoringKey, ctx: CtxDep) -> MemberRemoved:
    """Take someone out of the namespace (owners only); the labels they gave stay. 409 `last_owner` for the
    namespace's last owner."""
    return people.remove_person(ctx, who, namespace, member)
