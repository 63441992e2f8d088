"""The audit log: who did each irreversible or administrative action, when, and on what.

One function writes it, `record`, inside the transaction that makes the change: the event and the change are
stored together or not at all (a refused request has a transaction of its own, service/http/refusals.py).
Every route that writes records through it, except a label's own writes, whose row names its author and
time (tests/service/test_auth_matrix.py's AUDITED says which route records what); so do the command line's
`keys`, sign-ins and sign-outs, and retrainings that labels start. An event keeps no
text (a sample's or label's id, its trait and quality instead): zero-data-retention leaves no byte of a text.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import AuditKind
from core.json_types import JsonObject
from service.store.api_keys import Principal
from service.store.schema import AuditEvent, Model, Run, utcnow

#: The actor of what the command line does (it has no key).
OPERATOR = "operator"
#: The actor of what the service starts by itself (a retraining a full feedback buffer starts; its event
#: names the labels and their annotators).
AUTOMATIC_ACTOR = "service"
#: The service-wide stream: events that belong to no namespace (refused sign-in attempts, sign-ins of
#: people who belong to none). No namespace can be named `*`; the operator reads it with
#: `python -m service audit`.
SERVICE = "*"


def record(
    session: Session,
    who: Principal | str,
    kind: AuditKind,
    namespace: str,
    model: Model | None,
    detail: JsonObject,
) -> AuditEvent:
    """Add one event to `namespace`'s log. `who`: the caller (its annotator name is recorded, and a person's
    account, `detail.account`: issuer, subject and email), or a name for an actor without a key
    (`OPERATOR`); `model`: the model it concerns, None for a role change."""
    if isinstance(who, Principal) and who.account is not None:  # a person: their account, not only a name
        detail = {**detail, "account": dict(who.account)}
    event = AuditEvent(
        at=utcnow(),
        namespace=namespace,
        kind=kind,
        actor=who.annotator if isinstance(who, Principal) else who,
        handle=model.handle if model is not None else None,
        detail=detail,
    )
    session.add(event)
    return event


def run_started(
    session: Session, who: Principal | str, model: Model, run_id: str, kind: str, options: JsonObject
) -> AuditEvent:
    """A run asked for (train, retune, discover, synthesize, evaluate) or started by labels (`who` then
    names the labels in `options`): its id, kind and options (small values: effort, what triggered it)."""
    detail: JsonObject = {"run_id": run_id, "run_kind": kind, "options": dict(options)}
    return record(session, who, "run_started", model.namespace, model, detail)


def run_cancelled(session: Session, who: Principal, model: Model, run: Run, was: str) -> AuditEvent:
    """A run cancelled by `who` while it was `was` (queued or running)."""
    detail: JsonObject = {"run_id": run.id, "run_kind": run.kind, "status": was}
    return record(session, who, "run_cancelled", model.namespace, model, detail)


def latest(session: Session, namespace: str, limit: int) -> list[AuditEvent]:
    """`namespace`'s newest `limit` events, newest first (the command line's read)."""
    q = select(AuditEvent).where(AuditEvent.namespace == namespace).order_by(AuditEvent.id.desc())
    return list(session.scalars(q.limit(limit)))
