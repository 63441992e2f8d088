"""Labels as proposals (docs/api.md "Review"): the owner's agreement rule, and a reviewer's decisions.

An annotator's label on a reviewed model is stored `pending` and trains only once `accepted`: by a reviewer
(`decide`), or by the model's `agreement` rule, which accepts a text's pending votes once the text has the
votes wanted (at least 2, from different people), none rejected, all on one pole.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import ReviewDecision, ReviewStatus, pole_of
from service.store.campaign_schema import GoldAnswer
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait, content_key, key_of, utcnow

#: `reviewed_by` of a label the agreement rule accepted.
AGREEMENT = "agreement"


def labels_on(s: Session, model: Model, trait: Trait, text: str) -> list[SampleRow | FeedbackLabel]:
    """Every label of the text for the trait: its samples and its buffered feedback."""
    digest = sha256(text)
    samples = s.scalars(
        select(SampleRow).where(
            SampleRow.model_id == model.id,
            SampleRow.trait_id == trait.id,
            content_key(SampleRow.content_sha256) == key_of(digest),
            SampleRow.content_sha256 == digest,
        )
    ).all()
    feedback = s.scalars(
        select(FeedbackLabel).where(
            FeedbackLabel.model_id == model.id,
            FeedbackLabel.trait_key == trait.key,
            FeedbackLabel.text == text,
        )
    ).all()
    return [*samples, *feedback]


def accept_by_agreement(s: Session, model: Model, trait: Trait, text: str) -> int:
    """Under the `agreement` rule, accept the text's pending labels when its votes agree; how many."""
    if model.accept_rule != "agreement":
        return 0
    live = [r for r in labels_on(s, model, trait, text) if r.review != "rejected"]
    voters = {r.annotator for r in live}
    if len(voters) < max(2, model.votes_wanted) or len({pole_of(r.quality) for r in live}) != 1:
        return 0
    pending = [r for r in live if r.review == "pending"]
    for r in pending:
        r.review, r.reviewed_by = "accepted", AGREEMENT
    return len(pending)


def decide(
    rows: Sequence[SampleRow | FeedbackLabel], decision: ReviewDecision, reviewer: str, comment: str | None
) -> None:
    """A reviewer's decision on each label: accepted ones train from the next training on, rejected ones
    never do (and stay, visible to their author with the comment). A decision that changes whether a
    sample trains leaves it trained in no version: the next that reads it as it stands names itself."""
    for r in rows:
        status: ReviewStatus = "accepted" if decision == "accept" else "rejected"
        if isinstance(r, SampleRow) and r.review != status:
            r.trained_in = None
        r.review = status
        r.reviewed_by, r.review_comment = reviewer, comment


def decide_answers(
    rows: Sequence[GoldAnswer], decision: ReviewDecision, reviewer: str, comment: str | None
) -> None:
    """A reviewer's decision on gold answers, recorded as on the labels they read as (they never train
    either way); `reviewed_at`: when one last changed status, as an accepted one waits for a training that
    starts after it (a decision that changes nothing moves nothing, as a label's)."""
    now = utcnow()
    for r in rows:
        status: ReviewStatus = "accepted" if decision == "accept" else "rejected"
        if r.review != status:
            r.reviewed_at = now
        r.review = status
        r.reviewed_by, r.review_comment = reviewer, comment
