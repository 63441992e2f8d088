"""A gold answer as its person's label (docs/api/team.md, "Gold secrecy"): every route that shows an
annotator labels, or counts them, shows a gold answer as the label the label route said it was, so neither
one annotator nor two comparing notes can tell a gold text from another by what they labelled.

An answer is never a vote (nothing trains on it; it counts in no agreement), but it reads as one: a
`sample` when given before the model's newest training started (a draft's label, or a buffered one that
training folded in), else a buffered `feedback` label, exactly as an ordinary label moves; its
`version_no` the version whose training started after its acceptance, as a sample's `trained_in`, and
trained once it has one (service/domain/trained.py). The known answer and the votes that made it stay
hidden (service/domain/gold_secret.py)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import ReviewStatus
from core.engine.votes import Vote
from service.domain.trained import trainings
from service.schemas.my_labels import LabelKind
from service.schemas.samples import SampleOut
from service.store.campaign_schema import GoldAnswer, GoldItem
from service.store.samples import label_point, sha256
from service.store.schema import FeedbackLabel, Model, Trait


@dataclass(frozen=True)
class AnswerLabel:
    id: int
    annotator: str
    trait_id: int
    trait: str
    text: str
    digest: str
    quality: float
    created_at: datetime
    kind: LabelKind
    version_no: int | None  # the version whose training took it in, were it a vote (None: not accepted)
    trained: bool  # a version took it in: `version_no` is set (service/domain/trained.py)
    buffered: bool  # given to a trained model: a buffered label, or one a training folded in since
    review: ReviewStatus
    reviewed_by: str | None
    comment: str | None


def answer_labels(
    s: Session,
    model: Model,
    *,
    annotator: str | None = None,
    ids: Collection[int] | None = None,
    trait_id: int | None = None,
    digest: str | None = None,
) -> list[AnswerLabel]:
    """The model's gold answers as labels (of `annotator`, with these `ids`, of one trait's text), by id.
    As a label moves: given before any training, a sample, which the next training reads; given later, a
    buffered label until a training that takes the buffer in starts after it. Only an accepted one moves,
    as only accepted labels train: a buffered one waits for a training that starts after its acceptance."""
    q = (
        select(GoldAnswer, GoldItem.trait_id, Trait.key, GoldItem.text, GoldItem.content_sha256)
        .join(GoldItem, GoldItem.id == GoldAnswer.gold_id)
        .join(Trait, Trait.id == GoldItem.trait_id)
        .where(GoldAnswer.model_id == model.id)
    )
    if annotator is not None:
        q = q.where(GoldAnswer.annotator == annotator)
    if ids is not None:
        q = q.where(GoldAnswer.id.in_(list(ids)))
    if trait_id is not None:
        q = q.where(GoldItem.trait_id == trait_id)
    if digest is not None:
        q = q.where(GoldItem.content_sha256 == digest)
    rows = s.execute(q.order_by(GoldAnswer.id)).all()
    if not rows:
        return []
    versions = trainings(s, model)
    out = []
    for answer, tid, key, text, dig in rows:
        later = [(n, folds) for n, start, folds in versions if start >= answer.created_at]
        buffered = len(later) < len(versions)  # a version was trained before it: a buffered label
        # A training reads a label accepted when it starts (a sample's `trained_in`); a buffered one stays
        # in the buffer until one that takes it in does.
        accepted = answer.reviewed_at or answer.created_at
        taken = (
            next((n for n, start, folds in versions if start >= accepted and (folds or not buffered)), None)
            if answer.review == "accepted"
            else None
        )
        kind: LabelKind = "feedback" if buffered and taken is None else "sample"
        out.append(
            AnswerLabel(
                id=answer.id,
                annotator=answer.annotator,
                trait_id=tid,
                trait=key,
                text=text,
                digest=dig,
                quality=answer.quality,
                created_at=answer.created_at,
                kind=kind,
                buffered=buffered,
                version_no=taken,
                trained=taken is not None,  # as a label (trained.py): a version took it in as it stands
                review=answer.review,
                reviewed_by=answer.reviewed_by,
                comment=answer.review_comment,
            )
        )
    return out


def buffered_answers(s: Session, models: Collection[Model]) -> dict[int, tuple[int, int]]:
    """{model id: (answers that read as samples, answers that read as buffered labels)}, for the counts a
    model's answer shows beside its samples and its buffer."""
    out: dict[int, tuple[int, int]] = {}
    answered = select(GoldAnswer.model_id).where(GoldAnswer.model_id.in_([m.id for m in models])).distinct()
    with_answers = set(s.scalars(answered))
    for model in models:
        if model.id not in with_answers:
            continue
        labels = answer_labels(s, model)
        buffered = sum(a.kind == "feedback" for a in labels)
        out[model.id] = (len(labels) - buffered, buffered)
    return out


def buffer_size(s: Session, model: Model) -> int:
    """The model's buffer as every answer states it: its buffered labels and the answers that read as one."""
    labels = s.scalar(
        select(func.count()).select_from(FeedbackLabel).where(FeedbackLabel.model_id == model.id)
    )
    return (labels or 0) + buffered_answers(s, [model]).get(model.id, (0, 0))[1]


def buffered_accepted(s: Session, model: Model) -> int:
    """The answers that read as accepted buffered labels, which an automatic retraining counts as it counts
    the buffer's accepted labels: a full buffer of answers retrains as one of labels would."""
    if s.scalar(select(GoldAnswer.id).where(GoldAnswer.model_id == model.id).limit(1)) is None:
        return 0
    return sum(a.kind == "feedback" and a.review == "accepted" for a in answer_labels(s, model))


def counted_answers(labels: Iterable[AnswerLabel], votes: Iterable[Vote]) -> list[AnswerLabel]:
    """Those of `labels` (answers) that agreement counts as votes, as it counts labels: every answer but a
    rejected one and those of a text with votes of its own (a promoted text's): beside its settling vote,
    the known answer, an answer counted would tell its person whether it was right."""
    voted = {(v.trait, sha256(v.text)) for v in votes}
    return [a for a in labels if (a.trait, a.digest) not in voted and a.review != "rejected"]


def as_agreement_vote(a: AnswerLabel) -> Vote:
    return Vote(a.trait, a.text, a.quality, a.annotator, a.id)


def readable_answers(labels: list[AnswerLabel], me: str, blind: bool) -> list[AnswerLabel]:
    """Those of `labels` (answers to gold) that `me`, one who answers gold, reads as colleagues' votes: all
    of them, as any vote of a text that is not gold; on a blind model only on a text `me` answered too (as
    blind labelling shows votes once one voted)."""
    if not blind:
        return labels
    mine = {(a.trait_id, a.digest) for a in labels if a.annotator == me}
    return [a for a in labels if a.annotator == me or (a.trait_id, a.digest) in mine]


def as_vote(a: AnswerLabel, points: int | None) -> dict[str, object]:
    """The answer as the votes export shows a label of the pool route: a sample (`authored`, with the
    version that took it in) or a buffered label."""
    return {
        "kind": a.kind,
        "id": a.id,
        "annotator": a.annotator,
        "trait": a.trait,
        "text": a.text,
        "quality": a.quality,
        "adjudicated": False,
        "unsure": False,
        "created_at": a.created_at,
        "provenance": "feedback" if a.buffered else "authored",  # a folded label keeps its provenance
        "version_no": a.version_no if a.kind == "sample" else None,
        "point": label_point(a.quality, points),
    }


def as_sample(a: AnswerLabel, points: int | None) -> SampleOut:
    """The answer as `GET …/samples` shows a label of the pool route."""
    return SampleOut(
        id=a.id,
        trait=a.trait,
        text=a.text,
        quality=a.quality,
        point=label_point(a.quality, points),
        provenance="feedback" if a.buffered else "authored",
        source_url=None,
        content_sha256=a.digest,
        created_at=a.created_at,
        annotator=a.annotator,
        adjudicated=False,
        source_id=None,
        generator_model=None,
        metadata=None,
    )
