"""Who may read or write a model: the one place a handle becomes a model row for a key."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import HANDLE_RE, Action, least_role
from service.errors import ApiError
from service.store.api_keys import Principal
from service.store.schema import Model


def require_readable(who: Principal, handle: str, namespace: str | None) -> None:
    """404 for a model that does not exist (no namespace) or that the key cannot read: never a 403 that
    would confirm the model exists."""
    if namespace is None or not who.can_read(namespace):
        raise ApiError(404, "model_not_found", f"No model {handle!r}.")


def require_role(who: Principal, action: Action, namespace: str) -> None:
    """403 when the caller's role in `namespace` may not do `action` (core.contract.ROLE_ACTIONS)."""
    if not who.may(action, namespace):
        role = who.role_in(namespace)
        if role is None:
            raise ApiError(
                403, "forbidden", f"The caller has no role in namespace {namespace!r}.", namespace=namespace
            )
        article = "an" if role[:1] in ("a", "o") else "a"
        raise ApiError(
            403,
            "forbidden",
            f"This operation needs the {least_role(action)} role; the caller is {article} {role} "
            f"in namespace {namespace!r}.",
            namespace=namespace,
        )


def load_model(
    session: Session, who: Principal, handle: str, *, write: bool = False, action: Action = "manage"
) -> Model:
    """404 for a model that does not exist or that the key cannot read; 403 for a write it does not own,
    or one its role may not do (`action`: what the write is; anything not named is `manage`)."""
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
    if write:
        require_role(who, action, model.namespace)
    return model
