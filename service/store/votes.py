"""Stored labels as votes (core/engine/votes.py counts them): samples, the feedback buffer, evaluation items.

THE order of a model's votes is the order they were given, which is their label ids' order (`in_order`): a
sample and a buffered label draw ids from one sequence (service/store/label_ids.py), and a buffered label
folded in by a training keeps its id. So "latest" (a person's changed mind, a settle after the votes it
decides) means the same before and after the fold, whichever table each vote waits in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.engine.types import Sample
from core.engine.votes import CountedText, Vote, training_samples
from service.store.schema import EvalItem, FeedbackLabel, SampleRow, Trait


def sample_votes(
    session: Session,
    model_id: int,
    trait_id: int | None = None,
    *,
    accepted: bool = False,
    live: bool = False,
) -> list[Vote]:
    """The model's samples (of one trait, with `trait_id`) as votes, by id; `accepted`: only those that
    train (a pending or rejected label never does: docs/api.md "Review"); `live`: all but rejected ones."""
    q = (
        select(
            SampleRow.id,
            Trait.key,
            SampleRow.text,
            SampleRow.quality,
            SampleRow.annotator,
            SampleRow.adjudicated,
        )
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model_id)
    )
    if trait_id is not None:
        q = q.where(SampleRow.trait_id == trait_id)
    if accepted:
        q = q.where(SampleRow.review == "accepted")
    elif live:
        q = q.where(SampleRow.review != "rejected")
    return [
        Vote(
            trait=key, text=text, quality=quality, annotator=annotator, id=sid, adjudicated=bool(adjudicated)
        )
        for sid, key, text, quality, annotator, adjudicated in session.execute(q.order_by(SampleRow.id))
    ]


def feedback_votes(feedback: Iterable[FeedbackLabel]) -> list[Vote]:
    return [
        Vote(trait=f.trait_key, text=f.text, quality=f.quality, annotator=f.annotator, id=f.id)
        for f in sorted(feedback, key=lambda f: f.id)
    ]


def in_order(*votes: Iterable[Vote]) -> list[Vote]:
    """THE order of votes: as they were given, i.e. by label id, whichever table each comes from."""
    return sorted((v for some in votes for v in some), key=lambda v: v.id)


def label_votes(session: Session, model_id: int) -> list[Vote]:
    """Every vote of the model the agreement counts, in the order given: its samples and its buffered
    feedback; a pending label is a vote (the agreement rule itself reads them), a rejected one is not
    (docs/api.md "Agreement")."""
    feedback = session.scalars(
        select(FeedbackLabel).where(FeedbackLabel.model_id == model_id, FeedbackLabel.review != "rejected")
    )
    return in_order(sample_votes(session, model_id, live=True), feedback_votes(feedback))


def eval_votes(session: Session, model_id: int) -> list[Vote]:
    """The model's evaluation items as votes, by id (`id` is the item's id)."""
    rows = session.execute(
        select(EvalItem.id, EvalItem.trait_key, EvalItem.text, EvalItem.quality, EvalItem.annotator)
        .where(EvalItem.model_id == model_id)
        .order_by(EvalItem.id)
    )
    return [
        Vote(trait=key, text=text, quality=quality, annotator=annotator, id=iid)
        for iid, key, text, quality, annotator in rows
    ]


def samples_to_train(counted: Sequence[CountedText]) -> list[Sample]:
    """One Sample per counted text, its id its first label's (a buffered one's too: the fold keeps it)."""
    return training_samples(counted)
