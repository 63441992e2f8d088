"""Bulk removal (docs/api.md "Review"): an owner removes every label of one person on a model in one call,
and can undo it for an hour with the answer's `undo` token.

Labels are votes (samples), buffered feedback labels and unsure marks; comments are notes, not labels, and
stay. The person's gold answers go and come back with them, counted as the labels they read as
(gold_labels.py): a removal that left them would leave exactly the person's gold texts in their own labels.
The rows are kept aside (`removed_labels`) until the token expires, so an undo restores them as they
were, each label with its own id (label ids are never drawn twice, service/store/label_ids.py: no label took
it meanwhile; a vote the person gave again since, identical, stands for it with its own id). Under
zero-data-retention nothing of a text is kept aside, so such a removal cannot be undone. The serving version
is unchanged: the next training goes without them.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.contract import REMOVAL_UNDO_S, REVIEW_STATUSES
from core.engine.types import Sample
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.gold_labels import answer_labels
from service.domain.needs import Databases
from service.domain.states import require_label_write
from service.errors import ApiError
from service.schemas.review import LabelsRemoved, LabelsRestored
from service.store import audit
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer, GoldItem, RemovedLabels, UnsureMark
from service.store.db import transaction
from service.store.samples import add_samples, count_samples
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait, utcnow


def _open(s: Session, who: Principal, handle: str) -> Model:
    model = load_model(s, who, handle, write=True)  # an owner's
    require_label_write(s, model)  # a training in flight has read the labels already
    return model


def _when(at: datetime) -> str:
    return at.isoformat()


def remove_labels(ctx: Databases, who: Principal, handle: str, annotator: str) -> LabelsRemoved:
    with transaction(ctx.sessions) as s:
        model = _open(s, who, handle)
        keys = dict(s.execute(select(Trait.id, Trait.key).where(Trait.model_id == model.id)).tuples().all())
        samples = s.scalars(
            select(SampleRow).where(SampleRow.model_id == model.id, SampleRow.annotator == annotator)
        ).all()
        feedback = s.scalars(
            select(FeedbackLabel).where(
                FeedbackLabel.model_id == model.id, FeedbackLabel.annotator == annotator
            )
        ).all()
        unsure = s.scalars(
            select(UnsureMark).where(UnsureMark.model_id == model.id, UnsureMark.annotator == annotator)
        ).all()
        answers = s.scalars(
            select(GoldAnswer).where(GoldAnswer.model_id == model.id, GoldAnswer.annotator == annotator)
        ).all()
        read_as = _kinds(s, model, [r.id for r in answers])
        rows: JsonObject = {
            "samples": [
                {
                    "id": r.id,
                    "trait": keys[r.trait_id],
                    "text": r.text,
                    "quality": r.quality,
                    "provenance": r.provenance,
                    "adjudicated": r.adjudicated,
                    "created_at": _when(r.created_at),
                    "review": r.review,
                    "source_url": r.source_url,
                    "source_id": r.source_id,
                    "metadata": r.meta,
                    "trained_in": r.trained_in,
                }
                for r in samples
            ],
            "feedback": [
                {
                    "id": r.id,
                    "trait": r.trait_key,
                    "text": r.text,
                    "quality": r.quality,
                    "created_at": _when(r.created_at),
                    "review": r.review,
                    "reviewed_by": r.reviewed_by,
                    "review_comment": r.review_comment,
                }
                for r in feedback
            ],
            "unsure": [
                {
                    "trait_id": r.trait_id,
                    "text": r.text,
                    "digest": r.content_sha256,
                    "created_at": _when(r.created_at),
                }
                for r in unsure
            ],
            "gold": [
                {
                    "id": r.id,
                    "gold_id": r.gold_id,
                    "quality": r.quality,
                    "correct": r.correct,
                    "created_at": _when(r.created_at),
                    "review": r.review,
                    "reviewed_by": r.reviewed_by,
                    "review_comment": r.review_comment,
                    "reviewed_at": _when(r.reviewed_at) if r.reviewed_at else None,
                }
                for r in answers
            ],
        }
        for r in samples:
            count_samples(s, r.trait_id, [r.quality], removed=True)
        gone = ((SampleRow, samples), (FeedbackLabel, feedback), (UnsureMark, unsure), (GoldAnswer, answers))
        for table, found in gone:
            if found:
                s.execute(delete(table).where(table.id.in_([r.id for r in found])))
        counts = {
            "samples": len(samples) + read_as["sample"],
            "feedback": len(feedback) + read_as["feedback"],
            "unsure": len(unsure),
        }
        s.execute(delete(RemovedLabels).where(RemovedLabels.expires_at <= utcnow()))  # undos past their hour
        token = None
        if not model.zero_data_retention and any(counts.values()):
            token = secrets.token_urlsafe(24)
            s.add(
                RemovedLabels(
                    model_id=model.id,
                    token=token,
                    annotator=annotator,
                    removed_by=who.annotator,
                    expires_at=utcnow() + timedelta(seconds=REMOVAL_UNDO_S),
                    rows=rows,
                )
            )
        detail: JsonObject = {"annotator": annotator, **counts, "gold": len(answers)}  # the owners' log
        audit.record(s, who, "labels_removed", model.namespace, model, detail)
        model.updated_at = utcnow()
        return LabelsRemoved(handle=model.handle, annotator=annotator, removed=counts, undo=token)


def restore_labels(ctx: Databases, who: Principal, handle: str, token: str) -> LabelsRestored:
    with transaction(ctx.sessions) as s:
        model = _open(s, who, handle)
        kept = s.scalar(
            select(RemovedLabels).where(RemovedLabels.model_id == model.id, RemovedLabels.token == token)
        )
        if kept is None or kept.expires_at <= utcnow():
            raise ApiError(
                404,
                "removal_not_found",
                f"No removal of {model.handle} to undo with this token: it was undone already, or its hour "
                "passed.",
            )
        traits = dict(s.execute(select(Trait.key, Trait.id).where(Trait.model_id == model.id)).tuples().all())
        rows = kept.rows
        samples = [r for r in rows["samples"] if r["trait"] in traits]  # a trait deleted since: gone with it
        for review in REVIEW_STATUSES:
            mine = [r for r in samples if r["review"] == review]
            if mine:
                back = add_samples(
                    s,
                    model.id,
                    traits,
                    [Sample(r["trait"], r["text"], r["quality"]) for r in mine],
                    "authored",
                    provenances=[r["provenance"] for r in mine],
                    annotators=[kept.annotator] * len(mine),
                    adjudicated=[r["adjudicated"] for r in mine],
                    created_ats=[datetime.fromisoformat(r["created_at"]) for r in mine],
                    review=review,
                    # Kept aside since: `.get`, as a removal from before they were kept has none of them.
                    label_ids=[r.get("id") for r in mine],
                    source_urls=[r.get("source_url") for r in mine],
                    source_ids=[r.get("source_id") for r in mine],
                    metadata=[r.get("metadata") for r in mine],
                )
                _trained_as_before(s, [r for r, got in zip(mine, back, strict=True) if got == r.get("id")])
        for r in rows["feedback"]:
            s.add(
                FeedbackLabel(
                    # A removal from before ids were kept aside has none: one is drawn.
                    **({"id": r["id"]} if r.get("id") is not None else {}),
                    model_id=model.id,
                    trait_key=r["trait"],
                    text=r["text"],
                    quality=r["quality"],
                    annotator=kept.annotator,
                    created_at=datetime.fromisoformat(r["created_at"]),
                    review=r["review"],
                    reviewed_by=r["reviewed_by"],
                    review_comment=r["review_comment"],
                )
            )
        marks = 0
        for r in rows["unsure"]:
            taken = s.scalar(
                select(UnsureMark.id).where(
                    UnsureMark.trait_id == r["trait_id"],
                    UnsureMark.content_sha256 == r["digest"],
                    UnsureMark.annotator == kept.annotator,
                )
            )
            if taken is None and r["trait_id"] in traits.values():
                marks += 1
                s.add(
                    UnsureMark(
                        model_id=model.id,
                        trait_id=r["trait_id"],
                        text=r["text"],
                        content_sha256=r["digest"],
                        annotator=kept.annotator,
                        created_at=datetime.fromisoformat(r["created_at"]),
                    )
                )
        answers = _restore_answers(s, model, kept.annotator, rows.get("gold", []))  # older: none kept
        read_as = _kinds(s, model, answers)
        counts = {
            "samples": len(samples) + read_as["sample"],
            "feedback": len(rows["feedback"]) + read_as["feedback"],
            "unsure": marks,
        }
        detail: JsonObject = {"annotator": kept.annotator, **counts, "gold": len(answers)}
        audit.record(s, who, "labels_restored", model.namespace, model, detail)
        s.delete(kept)
        model.updated_at = utcnow()
        return LabelsRestored(handle=model.handle, annotator=kept.annotator, restored=counts)


def _kinds(s: Session, model: Model, answers: list[int]) -> dict[str, int]:
    """How many of these gold answers read as samples and as buffered labels (gold_labels.py)."""
    read = answer_labels(s, model, ids=answers) if answers else []
    return {kind: sum(a.kind == kind for a in read) for kind in ("sample", "feedback")}


def _restore_answers(s: Session, model: Model, annotator: str, kept: list[JsonObject]) -> list[int]:
    """The person's gold answers back as they stood, each with its id; not one whose gold item was deleted
    since, nor one the person answered again since (their new answer stands, as a vote given again)."""
    items = set(s.scalars(select(GoldItem.id).where(GoldItem.model_id == model.id)))
    theirs = select(GoldAnswer.gold_id).where(GoldAnswer.model_id == model.id)
    again = set(s.scalars(theirs.where(GoldAnswer.annotator == annotator)))
    back = [r for r in kept if r["gold_id"] in items and r["gold_id"] not in again]
    for r in back:
        reviewed_at = r["reviewed_at"]
        s.add(
            GoldAnswer(
                id=r["id"],
                model_id=model.id,
                gold_id=r["gold_id"],
                annotator=annotator,
                quality=r["quality"],
                correct=r["correct"],
                created_at=datetime.fromisoformat(str(r["created_at"])),
                review=r["review"],
                reviewed_by=r["reviewed_by"],
                review_comment=r["review_comment"],
                reviewed_at=datetime.fromisoformat(reviewed_at) if isinstance(reviewed_at, str) else None,
            )
        )
    s.flush()
    return [int(str(r["id"])) for r in back]


def _trained_as_before(s: Session, rows: list[JsonObject]) -> None:
    """The samples put back (`rows`, kept aside) name the version that trained them, as before."""
    for version_no in {r.get("trained_in") for r in rows} - {None}:
        ids = [r["id"] for r in rows if r.get("trained_in") == version_no]
        s.execute(update(SampleRow).where(SampleRow.id.in_(ids)).values(trained_in=version_no))
