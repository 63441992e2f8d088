"""The review queue (docs/api.md "Review"): a reviewed model's labels are proposals until accepted.

Everyone who owns the namespace reads the queue; an annotator reads only their own labels (a rejected one
with the reviewer's comment), a reviewer or owner everyone's. Deciding is the `review` action: an annotator
can never accept a label, theirs or a colleague's.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import ReviewStatus
from service.domain.access import load_model
from service.domain.gold_labels import AnswerLabel, answer_labels
from service.domain.needs import Resources
from service.domain.scoring import retrain_if_full
from service.domain.states import require_label_write, require_not_archived
from service.errors import ApiError
from service.schemas.review import PersonReview, Reviewed, ReviewIn, ReviewItem, ReviewPage
from service.store import audit
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer
from service.store.corrections import corrections_of
from service.store.db import transaction
from service.store.review import accept_by_agreement, decide, decide_answers
from service.store.schema import MAX_INT, FeedbackLabel, Model, SampleRow, Trait
from service.store.teams import is_team, label_status, reviews

KINDS = ("sample", "feedback")


def review_changed_label(
    s: Session, who: Principal, model: Model, row: SampleRow | FeedbackLabel, trait: Trait
) -> None:
    """The one review rule of a stored label whose text, trait or quality changed: every route that changes
    one calls it once the row holds the change. A change by one who may not review is a new proposal: the
    label stands where a label they give now starts (`pending` on a model under review, where only a
    reviewer or the agreement rule accepts it; else accepted), and no earlier decision speaks for it. Were
    it to keep an acceptance, one accepted label would carry any text into the next training. A reviewer's
    or an owner's change is a reviewer's judgement: the label keeps where it stands."""
    if who.may("review", model.namespace):
        return
    status = label_status(s, who, model)
    row.review, row.reviewed_by, row.review_comment = status, None, None
    if status == "pending":
        s.flush()  # the agreement rule reads the labels of the text as they are now
        accept_by_agreement(s, model, trait, row.text)


def review_item(kind: str, r: SampleRow | FeedbackLabel, trait: str) -> ReviewItem:
    return ReviewItem.model_validate(
        {
            "kind": kind,
            "id": r.id,
            "trait": trait,
            "text": r.text,
            "quality": r.quality,
            "annotator": r.annotator,
            "status": r.review,
            "reviewed_by": r.reviewed_by,
            "comment": r.review_comment,
            "created_at": r.created_at,
        }
    )


def with_corrections(s: Session, model: Model, items: list[ReviewItem]) -> list[ReviewItem]:
    """The items, a corrected one with the quality its annotator gave and who corrected it last."""
    found = corrections_of(s, model.id, [i.id for i in items])
    return [
        i.model_copy(update={"original_quality": c[0].before, "corrected_by": c[-1].corrected_by})
        if (c := found.get(i.id))
        else i
        for i in items
    ]


def _mine(who: Principal, model: Model) -> str | None:
    """The annotator whose labels the caller may read in the queue; None: everyone's."""
    return None if who.may("review", model.namespace) else who.annotator


def _samples(
    s: Session, model: Model, status: ReviewStatus, after: int, n: int, me: str | None
) -> list[ReviewItem]:
    q = (
        select(SampleRow, Trait.key)
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model.id, SampleRow.review == status, SampleRow.id > after)
    )
    if me is not None:
        q = q.where(SampleRow.annotator == me)
    return [review_item("sample", r, key) for r, key in s.execute(q.order_by(SampleRow.id).limit(n))]


def _feedback(
    s: Session, model: Model, status: ReviewStatus, after: int, n: int, me: str | None
) -> list[ReviewItem]:
    q = select(FeedbackLabel).where(
        FeedbackLabel.model_id == model.id, FeedbackLabel.review == status, FeedbackLabel.id > after
    )
    if me is not None:
        q = q.where(FeedbackLabel.annotator == me)
    return [review_item("feedback", r, r.trait_key) for r in s.scalars(q.order_by(FeedbackLabel.id).limit(n))]


def _people(s: Session, model: Model, me: str | None) -> list[PersonReview]:
    """Per person: labels decided (by a reviewer or the rule) and pending, from both tables and the answers
    to gold, which are their people's labels (gold_labels.py)."""
    counts: dict[str, dict[str, int]] = {}
    for table in (SampleRow, FeedbackLabel, GoldAnswer):
        decided = (table.review != "accepted") | table.reviewed_by.is_not(None)
        q = (
            select(table.annotator, table.review, func.count())
            .where(table.model_id == model.id, table.annotator.is_not(None), decided)
            .group_by(table.annotator, table.review)
        )
        if me is not None:
            q = q.where(table.annotator == me)
        for who, status, n in s.execute(q):
            line = counts.setdefault(who, {"accepted": 0, "rejected": 0, "pending": 0})
            line[status] += n
    out = []
    for who, c in sorted(counts.items()):
        done = c["accepted"] + c["rejected"]
        rate = round(c["accepted"] / done, 4) if done else None
        out.append(PersonReview(annotator=who, **c, acceptance_rate=rate))
    return out


def _readable(s: Session, who: Principal, handle: str) -> Model:
    model = load_model(s, who, handle)
    if not who.owns(model.namespace):  # labels are training data: the namespace's people only
        raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
    return model


def list_review(
    ctx: Resources, who: Principal, handle: str, status: ReviewStatus, limit: int, cursor: str | None
) -> ReviewPage:
    """The model's labels of one status, votes by id then buffered feedback by id (keyset pages)."""
    with transaction(ctx.reads) as s:
        model = _readable(s, who, handle)
        me = _mine(who, model)
        scope = f"review|{model.id}|{status}|{me or ''}"
        stage, after = _position(ctx.cursors.decode(cursor, scope) if cursor else [0, 0])
        items: list[tuple[int, ReviewItem]] = []
        for k in range(stage, len(KINDS)):
            fetch = _samples if KINDS[k] == "sample" else _feedback
            got = fetch(s, model, status, after if k == stage else 0, limit + 1 - len(items), me)
            # Gold answers are their people's labels (gold_labels.py): in the queue, decided as labels.
            got = _with_answers(s, model, me, KINDS[k], status, after if k == stage else 0, got)
            items += [(k, r) for r in got[: limit + 1 - len(items)]]
            if len(items) > limit:
                break
        page = items[:limit]
        next_cursor = ctx.cursors.encode(scope, [page[-1][0], page[-1][1].id]) if len(items) > limit else None
        return ReviewPage(
            handle=model.handle,
            review=reviews(model, is_team(s, model)),
            items=with_corrections(s, model, [r for _, r in page]),
            limit=limit,
            next_cursor=next_cursor,
            people=_people(s, model, me),
        )


def answer_item(a: AnswerLabel) -> ReviewItem:
    """A gold answer as the review item of the label it reads as."""
    return ReviewItem.model_validate(
        {
            "kind": a.kind,
            "id": a.id,
            "trait": a.trait,
            "text": a.text,
            "quality": a.quality,
            "annotator": a.annotator,
            "status": a.review,
            "reviewed_by": a.reviewed_by,
            "comment": a.comment,
            "created_at": a.created_at,
        }
    )


def _with_answers(
    s: Session,
    model: Model,
    me: str | None,
    kind: str,
    status: ReviewStatus,
    after: int,
    got: list[ReviewItem],
) -> list[ReviewItem]:
    more = [
        answer_item(a)
        for a in answer_labels(s, model, annotator=me)
        if a.kind == kind and a.review == status and a.id > after
    ]
    return sorted(got + more, key=lambda r: r.id) if more else got


def _position(after: object) -> tuple[int, int]:
    if (
        isinstance(after, list)
        and len(after) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in after)
        and 0 <= after[0] < len(KINDS)
    ):
        return after[0], after[1]
    raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.")


def _storable(ids: list[int]) -> list[int]:
    """The ids a row can hold (PostgreSQL refuses a larger one even in a comparison); the rest are missing."""
    return [i for i in ids if i <= MAX_INT]


def review_labels(ctx: Resources, who: Principal, handle: str, payload: ReviewIn) -> Reviewed:
    """Accept or reject labels, all or none: a label of another model, or none, is 404 and decides nothing."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="review")
        require_not_archived(model)
        # A label keeps its id for life (service/store/label_ids.py): one named as buffered that a training
        # folded in meanwhile is decided as the sample it is now.
        named = {r.id: r.kind for r in payload.items}
        ids = _storable(sorted(named))
        samples: Sequence[SampleRow] = s.scalars(
            select(SampleRow).where(SampleRow.model_id == model.id, SampleRow.id.in_(ids))
        ).all()
        feedback: Sequence[FeedbackLabel] = s.scalars(
            select(FeedbackLabel).where(FeedbackLabel.model_id == model.id, FeedbackLabel.id.in_(ids))
        ).all()
        answers = answer_labels(s, model, ids=ids)  # gold answers, decided as the labels they read as
        found = {r.id for r in samples} | {r.id for r in feedback} | {a.id for a in answers}
        missing = [{"kind": kind, "id": i} for i, kind in sorted(named.items()) if i not in found]
        if missing:
            raise ApiError(
                404,
                "label_not_found",
                f"{len(missing)} of the labels named are not labels of {model.handle} (deleted, trained "
                "from the buffer, or another model's): nothing was decided.",
                details=[
                    {"loc": ["body", "items"], "msg": f"{m['kind']} {m['id']}", "type": "label_not_found"}
                    for m in missing
                ],
            )
        buffered = [a for a in answers if a.kind == "feedback"]
        if feedback or buffered:  # a retraining in flight has read the buffer already
            require_label_write(s, model)
        labels: list[SampleRow | FeedbackLabel] = [*samples, *feedback]
        decide(labels, payload.decision, who.annotator, payload.comment)
        rows = s.scalars(select(GoldAnswer).where(GoldAnswer.id.in_([a.id for a in answers]))).all()
        decide_answers(rows, payload.decision, who.annotator, payload.comment)
        traits = dict(s.execute(select(Trait.id, Trait.key).where(Trait.model_id == model.id)).tuples().all())
        audit.record(
            s,
            who,
            "labels_reviewed",
            model.namespace,
            model,
            {
                "decision": payload.decision,
                "samples": [r.id for r in samples],
                "feedback": [r.id for r in feedback],
                "gold_answers": [a.id for a in answers],  # the owners' log names gold, as it does elsewhere
                "annotators": sorted({r.annotator or "" for r in labels} | {a.annotator for a in answers}),
                "commented": bool(payload.comment),
            },
        )
        s.flush()
        accepted = payload.decision == "accept" and (feedback or buffered)
        run_id = retrain_if_full(ctx, s, model) if accepted else None
        items = [review_item("sample", r, traits.get(r.trait_id, "")) for r in samples]
        items += [review_item("feedback", r, r.trait_key) for r in feedback]
        items += [answer_item(a) for a in answer_labels(s, model, ids=[a.id for a in answers])]
        out = Reviewed(
            handle=model.handle,
            decision=payload.decision,
            reviewed=len(items),
            items=with_corrections(s, model, sorted(items, key=lambda i: (i.kind != "sample", i.id))),
        )
    if run_id is not None:
        ctx.enqueue(run_id)
    return out
