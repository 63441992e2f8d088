"""A model's buffered score feedback: list it, and withdraw a label before the automatic retraining takes it.

Feedback (`POST …/score` with `feedback`) is buffered until `retrain_buffer` labels start an automatic
retraining (`service.domain.scoring.add_feedback`). The analyst who sent a label by mistake sees the buffer
and takes the label back here. Both need what sending feedback needs: an authoring key that owns the model's
namespace (the buffer is training data waiting, never readable by others). A retraining in flight has read
the buffer already, so a withdrawal then would not be honoured: 409 `model_busy` until it ends.
"""

from __future__ import annotations

from sqlalchemy import delete, select

from service.domain.access import load_model, require_role
from service.domain.blind import blind_for, feedback_seen
from service.domain.gold_labels import answer_labels, buffer_size, readable_answers
from service.domain.gold_secret import answerer, feedback_visible
from service.domain.needs import Databases, Resources
from service.domain.states import require_label_write
from service.errors import ApiError
from service.schemas.feedback import FeedbackLabelOut, FeedbackPage, FeedbackWithdrawn
from service.store import audit
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer
from service.store.db import transaction
from service.store.schema import MAX_INT, FeedbackLabel


def list_feedback(
    ctx: Resources, who: Principal, handle: str, limit: int, cursor: str | None
) -> FeedbackPage:
    """The model's buffered labels, oldest first (keyset pages by id), with the buffer's size and the size
    at which it retrains."""
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        if not who.owns(model.namespace):
            raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
        scope = f"feedback|{model.id}"
        after = ctx.cursors.position(cursor, scope) or 0  # ids start at 1
        q = select(FeedbackLabel).where(FeedbackLabel.model_id == model.id, FeedbackLabel.id > after)
        if (me := blind_for(who, model)) is not None:
            q = q.where(feedback_seen(me, model))
        if (answers := answerer(who, model)) is not None:  # no gold text's votes to one who answers gold
            q = q.where(feedback_visible(answers, model))
        rows = s.scalars(q.order_by(FeedbackLabel.id).limit(limit + 1)).all()
        page = rows[:limit]
        items = [
            FeedbackLabelOut(
                id=r.id,
                trait=r.trait_key,
                text=r.text,
                quality=r.quality,
                created_at=r.created_at,
                annotator=r.annotator,
            )
            for r in page
        ]
        if answers is not None:  # to one who answers gold, an answer is a label like any (gold_labels.py)
            more = [
                FeedbackLabelOut(
                    id=a.id,
                    trait=a.trait,
                    text=a.text,
                    quality=a.quality,
                    created_at=a.created_at,
                    annotator=a.annotator,
                )
                for a in readable_answers(answer_labels(s, model), answers, blind_for(who, model) is not None)
                if a.kind == "feedback" and a.id > after
            ]
            items = sorted(items + more, key=lambda x: x.id)
            more_rows = len(rows) > limit or len(items) > limit
            items = items[:limit]
        else:
            more_rows = len(rows) > limit
        buffered = buffer_size(s, model)
    next_cursor = ctx.cursors.encode(scope, items[-1].id) if more_rows else None
    return FeedbackPage(
        handle=handle,
        items=items,
        limit=limit,
        next_cursor=next_cursor,
        buffered=buffered,
        retrain_at=ctx.settings.retrain_buffer,
    )


def withdraw_feedback(ctx: Databases, who: Principal, handle: str, label_id: int) -> FeedbackWithdrawn:
    """Delete one buffered label: it will not be trained on."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")  # one's own label; more below
        require_label_write(s, model)  # a retraining in flight may have read the label already
        row = None
        if 1 <= label_id <= MAX_INT:
            query = select(FeedbackLabel).where(
                FeedbackLabel.id == label_id, FeedbackLabel.model_id == model.id
            )
            row = s.scalar(query)
        if (
            row is None and 1 <= label_id <= MAX_INT
        ):  # a gold answer reads as a buffered label (gold_labels.py)
            answer = next((a for a in answer_labels(s, model, ids=[label_id]) if a.kind == "feedback"), None)
            if answer is not None:
                if answer.annotator != who.annotator:
                    require_role(who, "review", model.namespace)
                detail = {
                    "trait": answer.trait,
                    "feedback_id": answer.id,
                    "quality": answer.quality,
                    "gold": True,
                }
                audit.record(
                    s,
                    who,
                    "feedback_withdrawn",
                    model.namespace,
                    model,
                    {**detail, "annotator": answer.annotator},
                )
                s.execute(delete(GoldAnswer).where(GoldAnswer.id == answer.id))
                buffered = buffer_size(s, model)
                return FeedbackWithdrawn(handle=handle, id=label_id, deleted=True, buffered=buffered)
        if row is None:
            raise ApiError(404, "feedback_not_found", f"No buffered feedback label {label_id} in {handle}.")
        if row.annotator != who.annotator:  # a colleague's label: a reviewer's call (docs/api.md "Roles")
            require_role(who, "review", model.namespace)
        detail = {"trait": row.trait_key, "feedback_id": row.id, "quality": row.quality}
        audit.record(
            s, who, "feedback_withdrawn", model.namespace, model, {**detail, "annotator": row.annotator}
        )
        s.delete(row)
        s.flush()
        buffered = buffer_size(s, model)
        return FeedbackWithdrawn(handle=handle, id=label_id, deleted=True, buffered=buffered)
