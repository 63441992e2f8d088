"""Bearer-key authentication and the scope / namespace rules of docs/api.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from service.context import Context
from service.errors import ApiError
from service.http.refusals import NEEDS_AUTHORING
from service.http.tokens import BAD_KEY, CHALLENGE, NO_KEY, identify
from service.store.api_keys import Principal, authenticate

bearer = HTTPBearer(
    auto_error=False,
    description="API key, or a person's ID token from the team's identity provider: "
    "`Authorization: Bearer <key or token>`",
)


def get_ctx(request: Request) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


CtxDep = Annotated[Context, Depends(get_ctx)]


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def principal_in(session: Session, creds: HTTPAuthorizationCredentials | None) -> Principal:
    """The key's principal, or the 401 every endpoint answers to a missing or invalid key."""
    if creds is None or not creds.credentials:
        raise ApiError(401, "unauthorized", NO_KEY, headers=CHALLENGE)
    found = authenticate(session, creds.credentials.strip())
    if found is None:
        raise ApiError(401, "unauthorized", BAD_KEY, headers=CHALLENGE)
    return found


async def principal(request: Request, ctx: CtxDep, creds: Credentials) -> Principal:
    # service.http.guard authenticated the key before the body was read; it is looked up again only for a
    # route the guard does not cover.
    who: Principal | None = getattr(request.state, "principal", None)
    if who is not None:
        return who
    if creds is None or not creds.credentials:
        raise ApiError(401, "unauthorized", NO_KEY, headers=CHALLENGE)
    verifier = getattr(request.app.state, "oidc", None)
    source = request.client.host if request.client else ""
    return await run_in_threadpool(identify, ctx, verifier, creds.credentials.strip(), source)


def authoring(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", NEEDS_AUTHORING)
    return who


AnyKey = Annotated[Principal, Depends(principal)]
AuthoringKey = Annotated[Principal, Depends(authoring)]
