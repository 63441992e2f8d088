"""State rules of spec section 3 as decided in docs/api.md."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.orm import Session

from service.errors import ApiError
from service.store import ledger
from service.store.tables import Model

UNTRAINED = ("draft", "failed")


def busy_error(session: Session, model: Model) -> ApiError:
    run = ledger.in_flight(session, model)
    kind = run.kind if run is not None else "run"
    headers = {"X-Run-Id": run.id} if run is not None else {}
    return ApiError(
        409,
        "model_busy",
        f"The model is busy ({kind} in progress); retry when it finishes.",
        retryable=True,
        headers=headers,
    )


class _HasState(Protocol):
    state: str


def require_not_archived(model: _HasState) -> None:
    if model.state == "archived":
        raise ApiError(409, "model_archived", "The model is archived; it can only be read.")


def require_untrained(session: Session, model: Model) -> None:
    """Trait and sample edits, discover and synthesize: only in draft (or failed, an untrained model).
    A trained model gets back to draft through POST /reopen (its active version keeps serving)."""
    require_not_archived(model)
    if model.state == "busy":
        raise busy_error(session, model)
    if model.state not in UNTRAINED:
        raise ApiError(
            409,
            "model_not_draft",
            "Traits and samples of a trained model are frozen into its versions; "
            f"reopen it (POST /v1/models/{model.handle}/reopen) to edit them; its version keeps serving.",
        )
