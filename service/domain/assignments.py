"""Assigned work: the owner gives pool texts to named people, sets their targets, moves one person's open
texts to another. A person's queue serves their assignment first (service/domain/suggestions.py), then the
shared pool while the model's `shared_pool` allows it."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.contract import ANNOTATOR_RE, MAX_ANNOTATOR_CHARS
from service.domain.access import load_model
from service.domain.needs import Databases
from service.domain.states import require_not_archived
from service.domain.team import readable_model
from service.errors import ApiError
from service.schemas.assignments import (
    Assigned,
    AssignIn,
    AssignmentsOut,
    PersonWork,
    PoolFilterIn,
    Reassigned,
    ReassignIn,
    TargetIn,
    TargetOut,
    Unassigned,
)
from service.store import audit
from service.store.api_keys import Principal
from service.store.assignments import PoolFilter, assigned, labelled_since, open_assignments, voted_digests
from service.store.campaign_schema import LabelTarget, PoolAssignment
from service.store.db import transaction
from service.store.heldout import evaluation_pool_ids
from service.store.schema import MAX_INT, Model, PoolClaim, PoolText, utcnow


def _managed(s: Session, who: Principal, handle: str) -> Model:
    model = load_model(s, who, handle, write=True)
    require_not_archived(model)
    return model


def _person(annotator: str) -> str:
    """A person named in a path: a name a label could carry (core.contract.ANNOTATOR_RE)."""
    if not ANNOTATOR_RE.match(annotator):
        raise ApiError(
            422,
            "invalid_annotator",
            f"An annotator is 1-{MAX_ANNOTATOR_CHARS} ASCII letters, digits, '.', '_', '@' and '-', starting "
            "with a letter or digit.",
        )
    return annotator


def assign(ctx: Databases, who: Principal, handle: str, payload: AssignIn) -> Assigned:
    with transaction(ctx.sessions) as s:
        model = _managed(s, who, handle)
        # Either texts named, or texts found: checked once the model is known (an unknown model is 404).
        if (payload.ids is None) == (payload.filter is None and payload.count is None):
            raise ApiError(
                422,
                "ids_or_filter",
                "Give either `ids`, or a `filter` and/or a `count`; nothing was assigned.",
            )
        person = payload.annotator
        mine = {pid for pid, _, _ in assigned(s, model.id, person)}
        if payload.ids is not None:
            chosen = _named(s, model, list(dict.fromkeys(payload.ids)))
            new = [pid for pid in chosen if pid not in mine]
        else:
            found = payload.filter or PoolFilterIn()
            where = PoolFilter(q=found.q, meta=tuple((found.meta or {}).items()))
            new = _matching(s, model, person, where, payload.count)
            chosen = new
        now = utcnow()
        for pid in new:
            s.add(
                PoolAssignment(
                    model_id=model.id,
                    pool_text_id=pid,
                    annotator=person,
                    assigned_by=who.annotator,
                    assigned_at=now,
                )
            )
        if new:
            audit.record(
                s,
                who,
                "assignments_changed",
                model.namespace,
                model,
                {"annotator": person, "assigned": len(new)},
            )
        s.flush()
        return Assigned(
            handle=model.handle,
            annotator=person,
            assigned=len(new),
            already=len(chosen) - len(new),
            total=len(mine) + len(new),
        )


def _named(s: Session, model: Model, ids: list[int]) -> list[int]:
    """`ids`, all of them the model's pool texts, or 404 naming those that are not (nothing assigned)."""
    valid = [i for i in ids if 1 <= i <= MAX_INT]
    found = set(s.scalars(select(PoolText.id).where(PoolText.model_id == model.id, PoolText.id.in_(valid))))
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise ApiError(
            404,
            "pool_text_not_found",
            f"No pool text {shown} in {model.handle}; nothing was assigned.",
        )
    return ids


def _matching(s: Session, model: Model, person: str, where: PoolFilter, count: int | None) -> list[int]:
    """Up to `count` pool texts matching `where`, oldest first, assigned to nobody, not labelled by the
    person, and not texts of the evaluation set (never handed out)."""
    taken = select(PoolAssignment.pool_text_id).where(PoolAssignment.model_id == model.id)
    rows = s.execute(
        select(PoolText.id, PoolText.content_sha256)
        .where(PoolText.model_id == model.id, PoolText.id.not_in(taken), *where.conditions())
        .order_by(PoolText.id)
    ).tuples()
    done = voted_digests(s, model.id, [person])[person]
    held = evaluation_pool_ids(s, model.id)
    out: list[int] = []
    for pid, digest in rows:
        if count is not None and len(out) >= count:
            break
        if digest not in done and pid not in held:
            out.append(pid)
    return out


def list_assignments(ctx: Databases, who: Principal, handle: str) -> AssignmentsOut:
    with transaction(ctx.reads) as s:
        model = readable_model(s, who, handle)
        rows = assigned(s, model.id)
        targets = {
            t.annotator: t for t in s.scalars(select(LabelTarget).where(LabelTarget.model_id == model.id))
        }
        people = sorted({a for _, a, _ in rows} | set(targets))
        done = voted_digests(s, model.id, people)
        today = datetime.combine(utcnow().date(), datetime.min.time(), tzinfo=UTC)
        work: list[PersonWork] = []
        for person in people:
            theirs = [digest for _, a, digest in rows if a == person]
            labelled = sum(d in done[person] for d in theirs)
            day, total = labelled_since(s, model.id, person, today), len(done[person])
            target = targets.get(person)
            progress = None
            if target is not None:
                progress = min(1.0, (day if target.period == "day" else total) / target.count)
            work.append(
                PersonWork(
                    annotator=person,
                    assigned=len(theirs),
                    labelled=labelled,
                    remaining=len(theirs) - labelled,
                    target=TargetOut(count=target.count, period=target.period) if target else None,
                    labelled_today=day,
                    labelled_total=total,
                    progress=progress,
                )
            )
        return AssignmentsOut(handle=model.handle, shared_pool=model.shared_pool, people=work)


def unassign(ctx: Databases, who: Principal, handle: str, annotator: str) -> Unassigned:
    """The person's texts they have not labelled leave their assignment (those labelled stay, as progress)."""
    person = _person(annotator)
    with transaction(ctx.sessions) as s:
        model = _managed(s, who, handle)
        gone = open_assignments(s, model.id, person)
        if gone:
            s.execute(
                delete(PoolAssignment).where(
                    PoolAssignment.model_id == model.id,
                    PoolAssignment.annotator == person,
                    PoolAssignment.pool_text_id.in_(gone),
                )
            )
            detail = {"annotator": person, "unassigned": len(gone)}
            audit.record(s, who, "assignments_changed", model.namespace, model, detail)
        return Unassigned(handle=model.handle, annotator=person, removed=len(gone))


def reassign(ctx: Databases, who: Principal, handle: str, annotator: str, payload: ReassignIn) -> Reassigned:
    """One action: the person's texts they have not labelled become `to`'s (a text `to` has or labelled
    already just leaves the person), and the person's claims on them end."""
    person = _person(annotator)
    with transaction(ctx.sessions) as s:
        model = _managed(s, who, handle)
        if payload.to == person:
            raise ApiError(422, "same_annotator", f"The texts are {person}'s already.")
        moving = open_assignments(s, model.id, person)
        theirs = {pid for pid, _, _ in assigned(s, model.id, payload.to)}
        done_by_to = voted_digests(s, model.id, [payload.to])[payload.to]
        digests = dict(
            s.execute(select(PoolText.id, PoolText.content_sha256).where(PoolText.id.in_(moving)))
            .tuples()
            .all()
        )
        drop = [pid for pid in moving if pid in theirs or digests.get(pid) in done_by_to]
        move = [pid for pid in moving if pid not in drop]
        mine = (PoolAssignment.model_id == model.id, PoolAssignment.annotator == person)
        if drop:
            s.execute(delete(PoolAssignment).where(*mine, PoolAssignment.pool_text_id.in_(drop)))
        if move:
            s.execute(
                update(PoolAssignment)
                .where(*mine, PoolAssignment.pool_text_id.in_(move))
                .values(annotator=payload.to, assigned_by=who.annotator, assigned_at=utcnow())
            )
        if moving:
            s.execute(
                delete(PoolClaim).where(
                    PoolClaim.model_id == model.id,
                    PoolClaim.annotator == person,
                    PoolClaim.pool_text_id.in_(moving),
                )
            )
            detail = {"annotator": person, "to": payload.to, "moved": len(move)}
            audit.record(s, who, "assignments_changed", model.namespace, model, detail)
        return Reassigned(handle=model.handle, annotator=person, to=payload.to, moved=len(move))


def set_target(
    ctx: Databases, who: Principal, handle: str, annotator: str, payload: TargetIn
) -> AssignmentsOut:
    """Set (or with `count` null, remove) the person's target; answers the model's assignments."""
    person = _person(annotator)
    with transaction(ctx.sessions) as s:
        model = _managed(s, who, handle)
        row = s.scalar(
            select(LabelTarget).where(LabelTarget.model_id == model.id, LabelTarget.annotator == person)
        )
        if payload.count is None:
            if row is not None:
                s.delete(row)
        elif row is None:
            s.add(
                LabelTarget(model_id=model.id, annotator=person, count=payload.count, period=payload.period)
            )
        else:
            row.count, row.period = payload.count, payload.period
        detail = {"annotator": person, "target": payload.count, "period": payload.period}
        audit.record(s, who, "assignments_changed", model.namespace, model, detail)
    return list_assignments(ctx, who, handle)
