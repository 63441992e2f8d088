"""Bearer-key authentication and the scope / namespace rules of docs/api.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session

from service.context import Context
from service.errors import ApiError
from service.keys import Principal, authenticate
from service.tables import Model

bearer = HTTPBearer(auto_error=False, description="API key: `Authorization: Bearer <key>`")


def get_ctx(request: Request) -> Context:
    return request.app.state.ctx  # type: ignore[no-any-return]


CtxDep = Annotated[Context, Depends(get_ctx)]


def principal(
    ctx: CtxDep, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Principal:
    if creds is None or not creds.credentials:
        raise ApiError(
            401,
            "unauthorized",
            "Send an API key as 'Authorization: Bearer <key>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    with ctx.reads() as session:
        found = authenticate(session, creds.credentials.strip())
    if found is None:
        raise ApiError(
            401, "unauthorized", "The API key is not valid.", headers={"WWW-Authenticate": "Bearer"}
        )
    return found


def authoring(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", "This operation needs an authoring key.")
    return who


AnyKey = Annotated[Principal, Depends(principal)]
AuthoringKey = Annotated[Principal, Depends(authoring)]


def load_model(session: Session, who: Principal, handle: str, *, write: bool = False) -> Model:
    """404 for a model that does not exist or that the key cannot read; 403 for a write it does not own."""
    query = select(Model).where(Model.handle == handle)
    # Writers lock the model row (PostgreSQL; SQLite already serialises writers), so two concurrent
    # state changes of one model cannot both see the old state.
    model = session.scalar(query.with_for_update() if write else query)
    if model is None or not who.can_read(model.namespace):
        raise ApiError(404, "model_not_found", f"No model {handle!r}.")
    if write and not who.owns(model.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
    return model
