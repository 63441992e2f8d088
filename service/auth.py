"""Bearer-key authentication and the scope / namespace rules of docs/api.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import HANDLE_RE
from service.context import Context
from service.errors import ApiError
from service.keys import Principal, authenticate
from service.tables import Model

bearer = HTTPBearer(auto_error=False, description="API key: `Authorization: Bearer <key>`")


def get_ctx(request: Request) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


CtxDep = Annotated[Context, Depends(get_ctx)]


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def principal_in(session: Session, creds: HTTPAuthorizationCredentials | None) -> Principal:
    """The key's principal, or the 401 every endpoint answers to a missing or invalid key."""
    if creds is None or not creds.credentials:
        raise ApiError(
            401,
            "unauthorized",
            "Send an API key as 'Authorization: Bearer <key>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    found = authenticate(session, creds.credentials.strip())
    if found is None:
        raise ApiError(
            401, "unauthorized", "The API key is not valid.", headers={"WWW-Authenticate": "Bearer"}
        )
    return found


async def principal(request: Request, ctx: CtxDep, creds: Credentials) -> Principal:
    # service.guard authenticated the key before the body was read; it is looked up again only for a
    # route the guard does not cover.
    who: Principal | None = getattr(request.state, "principal", None)
    if who is not None:
        return who
    return await run_in_threadpool(_principal_sync, ctx, creds)


def _principal_sync(ctx: Context, creds: HTTPAuthorizationCredentials | None) -> Principal:
    with ctx.reads() as session:
        return principal_in(session, creds)


def authoring(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", "This operation needs an authoring key.")
    return who


AnyKey = Annotated[Principal, Depends(principal)]
AuthoringKey = Annotated[Principal, Depends(authoring)]


def require_readable(who: Principal, handle: str, namespace: str | None) -> None:
    """404 for a model that does not exist (no namespace) or that the key cannot read: never a 403 that
    would confirm the model exists."""
    if namespace is None or not who.can_read(namespace):
        raise ApiError(404, "model_not_found", f"No model {handle!r}.")


def load_model(session: Session, who: Principal, handle: str, *, write: bool = False) -> Model:
    """404 for a model that does not exist or that the key cannot read; 403 for a write it does not own."""
    if not HANDLE_RE.match(handle):  # cannot exist; and no odd path text reaches the database
        raise ApiError(404, "model_not_found", f"No model {handle!r}.")
    query = select(Model).where(Model.handle == handle)
    # Writers lock the model row (PostgreSQL; SQLite already serialises writers), so two concurrent
    # state changes of one model cannot both see the old state.
    model = session.scalar(query.with_for_update() if write else query)
    require_readable(who, handle, model.namespace if model else None)
    assert model is not None
    if write and not who.owns(model.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
    return model
