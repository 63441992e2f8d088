"""One's own labels on a model (docs/api.md "One's own labels"): list them newest first, and change or
withdraw one while it is not yet trained into a version.

A label is a sample (a vote) or a buffered feedback label (a trained model's, waiting for the next version).
"Trained into a version": a version took the label in as it stands (service/domain/trained.py, the rule
the votes export's `version_no` follows too). A buffered label is never trained (a training that takes it
in deletes it from the buffer and folds it into the samples, keeping the time it was given). While a
training is in flight it may have read any label: a change then is 409 `model_busy`, as a feedback
withdrawal is. Every change is audited as a vote edit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import ColumnElement, and_, false, func, or_, select, true
from sqlalchemy.orm import InstrumentedAttribute, Session

from core.contract import AuditKind, pole_of
from core.json_types import JsonObject
from service.domain.access import load_model, require_role
from service.domain.gold_labels import AnswerLabel, answer_labels
from service.domain.gold_queue import accept_answers_by_agreement
from service.domain.needs import Databases, Resources
from service.domain.review import review_changed_label
from service.domain.scales import label_quality
from service.domain.states import require_label_write, require_not_archived
from service.domain.trained import sample_versions
from service.errors import ApiError
from service.schemas.my_labels import LabelKind, MyLabel, MyLabelPage, MyLabelPatch, MyLabelWithdrawn
from service.store import audit, quotas
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer, GoldItem
from service.store.db import transaction
from service.store.samples import count_samples, label_point, scale_points, sha256
from service.store.schema import (
    MAX_INT,
    FeedbackLabel,
    Model,
    SampleRow,
    Trait,
    content_key,
    key_of,
    utcnow,
)
from service.store.teams import label_status

#: The order of the two kinds among labels given at the same instant (the list's keyset).
_RANK: dict[LabelKind, int] = {"sample": 0, "feedback": 1}


def _before(
    at: InstrumentedAttribute[datetime],
    rank: int,
    ident: InstrumentedAttribute[int],
    after: tuple[datetime, int, int],
) -> ColumnElement[bool]:
    """(created_at, rank, id) < `after`, for one table whose rows all have `rank`."""
    when, their_rank, their_id = after
    tie: ColumnElement[bool] = (
        ident < their_id if rank == their_rank else (true() if rank < their_rank else false())
    )
    return or_(at < when, and_(at == when, tie))


def list_my_labels(
    ctx: Resources,
    who: Principal,
    handle: str,
    q: str | None,
    trait: str | None,
    since: datetime | None,
    limit: int,
    cursor: str | None,
) -> MyLabelPage:
    """The caller's labels on the model, newest first, whose text contains `q` (any case), of `trait` (a key
    or a name), given at or after `since`. Only the caller's own: blind labelling has nothing to hide."""
    if since is not None and since.tzinfo is None:  # a time without a zone is UTC, as every time here
        since = since.replace(tzinfo=UTC)
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        # The filters, hashed, are the cursor's scope: a page's cursor never continues another listing, and a
        # long search stays out of the cursor.
        filters = f"{q or ''}|{trait or ''}|{since.isoformat() if since else ''}"
        scope = f"my-labels|{model.id}|{who.annotator}|{sha256(filters)[:16]}"
        after = _position(ctx.cursors.decode(cursor, scope)) if cursor else None
        rows = s.execute(select(Trait.id, Trait.key, Trait.scale).where(Trait.model_id == model.id)).all()
        traits = {tid: key for tid, key, _ in rows}
        points = {key: scale_points(scale) for _, key, scale in rows}
        keys = set(traits.values())
        if trait is not None:
            named = set(
                s.scalars(
                    select(Trait.key).where(
                        Trait.model_id == model.id, (Trait.key == trait) | (Trait.name == trait)
                    )
                )
            )
            keys &= named
        ids = [i for i, k in traits.items() if k in keys]
        sample_where = [
            SampleRow.model_id == model.id,
            SampleRow.annotator == who.annotator,
            SampleRow.trait_id.in_(ids),
        ]
        feedback_where = [
            FeedbackLabel.model_id == model.id,
            FeedbackLabel.annotator == who.annotator,
            FeedbackLabel.trait_key.in_(keys),
        ]
        if q:
            needle = q.lower()
            sample_where.append(func.lower(SampleRow.text).contains(needle, autoescape=True))
            feedback_where.append(func.lower(FeedbackLabel.text).contains(needle, autoescape=True))
        if since is not None:
            sample_where.append(SampleRow.created_at >= since)
            feedback_where.append(FeedbackLabel.created_at >= since)
        total = (s.scalar(select(func.count()).select_from(SampleRow).where(*sample_where)) or 0) + (
            s.scalar(select(func.count()).select_from(FeedbackLabel).where(*feedback_where)) or 0
        )
        total += _gold_answers(s, model.id, who.annotator, ids, q, since)
        sample_page = list(sample_where)
        feedback_page = list(feedback_where)
        if after is not None:
            sample_page.append(_before(SampleRow.created_at, _RANK["sample"], SampleRow.id, after))
            feedback_page.append(
                _before(FeedbackLabel.created_at, _RANK["feedback"], FeedbackLabel.id, after)
            )
        newest_first = (SampleRow.created_at.desc(), SampleRow.id.desc())
        samples = s.scalars(
            select(SampleRow).where(*sample_page).order_by(*newest_first).limit(limit + 1)
        ).all()
        buffered = s.scalars(
            select(FeedbackLabel)
            .where(*feedback_page)
            .order_by(FeedbackLabel.created_at.desc(), FeedbackLabel.id.desc())
            .limit(limit + 1)
        ).all()
        versions = sample_versions(s, model, samples)
        merged = [_sample_item(r, traits[r.trait_id], versions[r.id]) for r in samples]
        merged += [_feedback_item(r, points[r.trait_key]) for r in buffered]
        merged += [
            item
            for a in answer_labels(s, model, annotator=who.annotator)
            if a.trait_id in ids
            and (not q or q.lower() in a.text.lower())
            and (since is None or a.created_at >= since)
            and (after is None or (a.created_at, _RANK[a.kind], a.id) < after)
            for item in [_answer_item(a, points[a.trait])]
        ]
        merged.sort(key=lambda x: (x.created_at, _RANK[x.kind], x.id), reverse=True)
        page = merged[:limit]
    next_cursor = None
    if len(merged) > limit:
        last = page[-1]
        next_cursor = ctx.cursors.encode(scope, [last.created_at.isoformat(), _RANK[last.kind], last.id])
    return MyLabelPage(handle=model.handle, items=page, limit=limit, next_cursor=next_cursor, total=total)


def _gold_answers(
    s: Session,
    model_id: int,
    annotator: str | None,
    trait_ids: list[int],
    q: str | None,
    since: datetime | None,
) -> int:
    """The caller's answers to gold items the filters keep, counted in `total` as the labels they read as
    (gold_labels.py), so that a session's count moves with every text labelled."""
    where = [
        GoldAnswer.model_id == model_id,
        GoldAnswer.annotator == annotator,
        GoldItem.trait_id.in_(trait_ids),
    ]
    if q:
        where.append(func.lower(GoldItem.text).contains(q.lower(), autoescape=True))
    if since is not None:
        where.append(GoldAnswer.created_at >= since)
    found = select(func.count()).select_from(GoldAnswer).join(GoldItem, GoldItem.id == GoldAnswer.gold_id)
    return s.scalar(found.where(*where)) or 0


def _answer_item(a: AnswerLabel, points: int | None) -> MyLabel:
    """A gold answer as one's own label (gold_labels.py): listed, changed and withdrawn as one."""
    return MyLabel(
        kind=a.kind,
        id=a.id,
        trait=a.trait,
        text=a.text,
        quality=a.quality,
        point=label_point(a.quality, points),
        created_at=a.created_at,
        review=a.review,
        adjudicated=False,
        trained=a.trained,
    )


def _my_answer(s: Session, who: Principal, model: Model, label_id: int) -> GoldAnswer | None:
    """The caller's gold answer of this id, refused once it reads as trained (as a label would be)."""
    if not 1 <= label_id <= MAX_INT:
        return None
    row = s.scalar(
        select(GoldAnswer).where(
            GoldAnswer.id == label_id, GoldAnswer.model_id == model.id, GoldAnswer.annotator == who.annotator
        )
    )
    if row is None:
        return None
    [read] = answer_labels(s, model, ids=[row.id])
    if read.version_no is not None:
        raise _trained(model, label_id, read.version_no)
    return row


def _answer_of(s: Session, who: Principal, handle: str, label_id: int) -> tuple[Model, GoldAnswer] | None:
    model = load_model(s, who, handle, write=True, action="label")
    require_not_archived(model)
    row = _my_answer(s, who, model, label_id)
    if row is None:
        return None
    require_label_write(s, model)
    return model, row


def _answer_changed(
    s: Session, who: Principal, model: Model, row: GoldAnswer, quality: float | None
) -> MyLabel:
    """A change (`quality`) or withdrawal (None) of one's gold answer, audited as a label's (the owners'
    log names it gold): the answer is judged as it stands, and a withdrawn one is no answer (its text may
    come back, as any text's)."""
    [read] = answer_labels(s, model, ids=[row.id])
    points = scale_points(s.scalar(select(Trait.scale).where(Trait.id == read.trait_id)))
    detail: JsonObject = {f"{read.kind}_id": row.id, "annotator": row.annotator, "gold": True}
    if quality is None:
        event: AuditKind = "vote_deleted" if read.kind == "sample" else "feedback_withdrawn"
        audit.record(
            s, who, event, model.namespace, model, {**detail, "trait": read.trait, "quality": row.quality}
        )
        s.delete(row)
    elif quality != row.quality:
        before, after = (
            {"trait": read.trait, "quality": row.quality},
            {"trait": read.trait, "quality": quality},
        )
        audit.record(
            s, who, "vote_edited", model.namespace, model, {**detail, "before": before, "after": after}
        )
        known = s.scalar(select(GoldItem.quality).where(GoldItem.id == row.gold_id))
        row.quality, row.correct = quality, known is not None and pole_of(quality) == pole_of(known)
        if not who.may("review", model.namespace):  # a new proposal, as a changed label (review.py)
            row.review = label_status(s, who, model)
            row.reviewed_by = row.review_comment = row.reviewed_at = None
            s.flush()
            if row.review == "pending":
                accept_answers_by_agreement(s, model, row.gold_id)
    model.updated_at = utcnow()
    s.flush()
    if quality is None:
        return _answer_item(read, points)
    [now] = answer_labels(s, model, ids=[row.id])
    return _answer_item(now, points)


def _position(after: object) -> tuple[datetime, int, int]:
    """A cursor's (created_at, rank, id); 400 `invalid_cursor` for anything else."""
    try:
        assert isinstance(after, list) and len(after) == 3
        when, rank, ident = after
        assert isinstance(rank, int) and isinstance(ident, int)
        return datetime.fromisoformat(when), rank, ident
    except (AssertionError, TypeError, ValueError):
        raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.") from None


def _sample_item(row: SampleRow, trait_key: str, version_no: int | None) -> MyLabel:
    return MyLabel(
        kind="sample",
        id=row.id,
        trait=trait_key,
        text=row.text,
        quality=row.quality,
        point=row.point,
        created_at=row.created_at,
        review=row.review,
        adjudicated=bool(row.adjudicated),
        trained=version_no is not None,
        metadata=row.meta,
    )


def _feedback_item(row: FeedbackLabel, points: int | None) -> MyLabel:
    """A buffered label keeps no point: the one its quality lies on on a trait of `points` points."""
    return MyLabel(
        kind="feedback",
        id=row.id,
        trait=row.trait_key,
        text=row.text,
        quality=row.quality,
        point=label_point(row.quality, points),
        created_at=row.created_at,
        review=row.review,
        adjudicated=False,
        trained=False,
    )


def _mine(
    s: Session, who: Principal, handle: str, kind: LabelKind, label_id: int
) -> tuple[Model, SampleRow | FeedbackLabel]:
    """The model and the caller's label, refused while a training may be reading it or once trained.
    404 `label_not_found` for another's label as for none: this list is one's own."""
    model = load_model(s, who, handle, write=True, action="label")
    require_not_archived(model)
    row: SampleRow | FeedbackLabel | None = None
    # A label keeps its id for life (service/store/label_ids.py): a buffered label a training folded in is
    # found by that id as the sample it is now, whichever `kind` the caller knew it by.
    if 1 <= label_id <= MAX_INT:
        row = s.scalar(
            select(SampleRow).where(
                SampleRow.id == label_id, SampleRow.model_id == model.id, SampleRow.annotator == who.annotator
            )
        )
    if row is None and 1 <= label_id <= MAX_INT:
        row = s.scalar(
            select(FeedbackLabel).where(
                FeedbackLabel.id == label_id,
                FeedbackLabel.model_id == model.id,
                FeedbackLabel.annotator == who.annotator,
            )
        )
    if row is None:
        raise ApiError(404, "label_not_found", f"No {kind} label {label_id} of yours in {model.handle}.")
    if isinstance(row, SampleRow) and row.adjudicated:  # a settling vote stays its reviewer's to change
        require_role(who, "review", model.namespace)
    require_label_write(s, model)  # a training in flight may have read the label already
    if isinstance(row, SampleRow) and (version_no := sample_versions(s, model, [row])[row.id]) is not None:
        raise _trained(model, label_id, version_no)
    return model, row


def _trained(model: Model, label_id: int, version_no: int) -> ApiError:
    return ApiError(
        409,
        "label_trained",
        f"Your label {label_id} was trained into version v{version_no} of {model.handle}: a trained label "
        "stays as it was. A reviewer can settle the text instead.",
    )


def change_my_label(
    ctx: Resources, who: Principal, handle: str, kind: LabelKind, label_id: int, patch: MyLabelPatch
) -> MyLabel:
    """A new quality (or point of the trait's scale) for one's own untrained label, audited as a vote edit.
    The review rule of every change (`review_changed_label`): on a reviewed model it is a new proposal,
    pending again for one who may not review. Held to the quotas by what it adds (a quality: nothing)."""
    with transaction(ctx.sessions) as s:
        if (gold := _answer_of(s, who, handle, label_id)) is not None:
            model, answer = gold
            trait = s.scalar(
                select(Trait)
                .join(GoldItem, GoldItem.trait_id == Trait.id)
                .where(GoldItem.id == answer.gold_id)
            )
            assert trait is not None
            if patch.point is None:
                assert patch.quality is not None
                new_quality = float(patch.quality)
            else:
                new_quality = label_quality(trait, patch.quality, patch.point, ("body", "quality"))
            return _answer_changed(s, who, model, answer, new_quality)
        model, row = _mine(s, who, handle, kind, label_id)
        if isinstance(row, SampleRow):
            trait = s.get(Trait, row.trait_id)
            ref: JsonObject = {"sample_id": row.id}
        else:
            trait = s.scalar(select(Trait).where(Trait.model_id == model.id, Trait.key == row.trait_key))
            ref = {"feedback_id": row.id}
        assert trait is not None  # deleting a trait deletes its labels
        key, points = trait.key, scale_points(trait.scale)
        if patch.point is None:  # a quality, as a sample edit takes it (on a scale too)
            assert patch.quality is not None  # the schema asks for one of the two
            quality = float(patch.quality)
        else:  # a point: the labelling route's rule
            quality = label_quality(trait, patch.quality, patch.point, ("body", "quality"))
        if quality != row.quality:
            edited: JsonObject = {
                **ref,
                "annotator": row.annotator,
                "before": {"trait": key, "quality": row.quality},
                "after": {"trait": key, "quality": quality},
                "text_changed": False,
            }
            audit.record(s, who, "vote_edited", model.namespace, model, edited)
            # The one check every edit passes: a new quality keeps the text, so it adds nothing.
            mine = (row.annotator, row.text)
            quotas.require_edit_room(s, ctx.settings, who, model, mine, mine)
            changed = row
            if isinstance(row, SampleRow):
                row = _requality(s, model, row, quality, points)
            else:
                row.quality = quality
            if row is changed:  # else a stored twin answers, as it was decided
                review_changed_label(s, who, model, row, trait)
            model.updated_at = utcnow()
            s.flush()
        if isinstance(row, SampleRow):
            return _sample_item(row, key, None)  # a trained one stays as it was: this one is not
        return _feedback_item(row, points)


def _requality(s: Session, model: Model, row: SampleRow, quality: float, points: int | None) -> SampleRow:
    """The sample with its new quality (and the point it lies on, of a trait of `points` points); an identical
    stored one (as on create, never two) answers instead."""
    same = s.scalar(
        select(SampleRow).where(
            SampleRow.model_id == model.id,
            SampleRow.trait_id == row.trait_id,
            content_key(SampleRow.content_sha256) == key_of(row.content_sha256),  # the index
            SampleRow.content_sha256 == row.content_sha256,
            SampleRow.quality == quality,
            SampleRow.annotator == row.annotator,
            SampleRow.adjudicated == row.adjudicated,
            SampleRow.id != row.id,
        )
    )
    count_samples(s, row.trait_id, [row.quality], removed=True)
    if same is not None:
        s.delete(row)
        return same
    count_samples(s, row.trait_id, [quality])
    row.quality = quality
    row.point = label_point(quality, points)
    return row


def withdraw_my_label(
    ctx: Databases, who: Principal, handle: str, kind: LabelKind, label_id: int
) -> MyLabelWithdrawn:
    """Delete one's own untrained label, audited: a vote deleted (a settling one unsettles its text), or a
    buffered label withdrawn."""
    with transaction(ctx.sessions) as s:
        if (gold := _answer_of(s, who, handle, label_id)) is not None:
            model, answer = gold
            out = _answer_changed(s, who, model, answer, None)
            return MyLabelWithdrawn(handle=model.handle, kind=out.kind, id=label_id, deleted=True)
        model, row = _mine(s, who, handle, kind, label_id)
        event: AuditKind
        if isinstance(row, SampleRow):
            trait = s.get(Trait, row.trait_id)
            detail: JsonObject = {
                "trait": trait.key if trait else None,
                "sample_id": row.id,
                "quality": row.quality,
            }
            event = "unsettled" if row.adjudicated else "vote_deleted"
            count_samples(s, row.trait_id, [row.quality], removed=True)
        else:
            detail = {"trait": row.trait_key, "feedback_id": row.id, "quality": row.quality}
            event = "feedback_withdrawn"
        audit.record(s, who, event, model.namespace, model, {**detail, "annotator": row.annotator})
        s.delete(row)
        model.updated_at = utcnow()
        return MyLabelWithdrawn(handle=model.handle, kind=kind, id=label_id, deleted=True)
