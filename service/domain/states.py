"""State rules of spec section 3 as decided in docs/api.md."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.orm import Session

from core.model_states import Operation, can
from service.errors import ApiError
from service.store import ledger
from service.store.schema import Model


def busy_error(session: Session, model: Model, *, cancel_first: bool = False) -> ApiError:
    """409 `model_busy` naming the run in flight; `cancel_first`: say how to cancel it (a delete, which a
    run in flight would otherwise block until it ends)."""
    run = ledger.in_flight(session, model)
    kind = run.kind if run is not None else "run"
    headers = {"X-Run-Id": run.id} if run is not None else {}
    then = "retry when it finishes."
    if cancel_first and run is not None:
        then = (
            f"retry when it finishes, or cancel it first: client.cancel({model.handle!r}, {run.id!r}) "
            f"(POST /v1/models/{model.handle}/runs/{run.id}/cancel)."
        )
    return ApiError(
        409, "model_busy", f"The model is busy ({kind} in progress); {then}", retryable=True, headers=headers
    )


class _HasState(Protocol):
    @property
    def state(self) -> str: ...


def require_not_archived(model: _HasState) -> None:
    if model.state == "archived":
        raise ApiError(409, "model_archived", "The model is archived; it can only be read.")


def require_label_write(session: Session, model: Model) -> None:
    """A write of a label's state (core.model_states.TRANSITIONS["label"]): any state but archived; while
    busy, 409 `model_busy` only when the run in flight reads the labels (a training), never for a run that
    reads a version (an evaluation)."""
    run = ledger.in_flight(session, model) if model.state == "busy" else None
    if can("label", model.state, run.kind if run is not None else None):
        return
    require_not_archived(model)
    raise busy_error(session, model)


def require(session: Session, model: Model, operation: Operation) -> None:
    """`operation` may start from the model's state (core.model_states.TRANSITIONS), else that state's 409.

    Trait and sample edits, discover and synthesize: only in an untrained model (draft, or failed). A trained
    model gets back to draft through POST /reopen (its active version keeps serving)."""
    if can(operation, model.state):
        return
    require_not_archived(model)
    if model.state == "busy":
        raise busy_error(session, model)
    raise ApiError(
        409,
        "model_not_draft",
        "Traits and samples of a trained model are frozen into its versions; "
        f"reopen it (POST /v1/models/{model.handle}/reopen) to edit them; its version keeps serving.",
    )
