"""Which namespaces hold a team (more than one person who may write them), and what that turns on by default.

A model in a team's namespace gets no automatic retraining unless its owner chose it (`auto_retrain_set`),
and its annotators' labels wait for a reviewer unless its owner turned review off: labels from several people
reach the served model only when someone decided so.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import ReviewStatus
from service.store.api_keys import Principal
from service.store.schema import ApiKey, Membership, Model, utcnow


def writers(session: Session, namespaces: Collection[str]) -> dict[str, int]:
    """Per namespace, the credentials that may write it: its memberships and its live authoring keys (a
    person holding both counts twice, which only makes the namespace a team sooner)."""
    wanted = set(namespaces)
    counts = dict.fromkeys(wanted, 0)
    for ns in session.scalars(select(Membership.namespace).where(Membership.namespace.in_(wanted))):
        counts[ns] += 1
    now = utcnow()
    keys = session.execute(
        select(ApiKey.namespaces, ApiKey.expires_at).where(
            ApiKey.revoked_at.is_(None), ApiKey.scope == "authoring"
        )
    ).all()
    for spaces, expires in keys:
        if expires is not None and expires <= now:
            continue
        for ns in wanted.intersection(spaces):
            counts[ns] += 1
    return counts


def team_namespaces(session: Session, namespaces: Collection[str]) -> set[str]:
    """Those of `namespaces` with more than one person who may write them."""
    return {ns for ns, n in writers(session, namespaces).items() if n > 1}


def is_team(session: Session, model: Model) -> bool:
    return model.namespace in team_namespaces(session, [model.namespace])


def reviews(model: Model, team: bool) -> bool:
    """Whether an annotator's labels wait for a reviewer: as the owner set it; unset, on for a team's."""
    return model.review if model.review is not None else team


def label_status(session: Session, who: Principal, model: Model) -> ReviewStatus:
    """Where a label the caller gives now starts: `pending` for one who may not review, on a reviewed
    model; else `accepted`."""
    if who.may("review", model.namespace):
        return "accepted"
    return "pending" if reviews(model, is_team(session, model)) else "accepted"


def auto_retrains(model: Model, team: bool) -> bool:
    """Whether a full feedback buffer retrains the model: as its owner set it; unset, on for one person's
    model and off for a team's."""
    return model.auto_retrain if model.auto_retrain_set or not team else False
