"""A reviewer corrects a label (docs/api/review.md, "Corrections"): the label takes the corrected quality,
the reviewed answer training and the votes export read, and keeps its id; the quality its annotator gave,
who corrected it and when stay in `label_corrections`, shown in the review queue and the text's history.

A correction is a reviewer's judgement, so the label stands accepted by them. It is audited as
`label_corrected`. A trained label may be corrected too (as a reviewer may reject one): the correction trains
from the next training on, so the label no longer names the version that took in what it said before.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.gold_labels import answer_labels
from service.domain.needs import Resources
from service.domain.review import answer_item, review_item, with_corrections
from service.domain.scales import label_quality
from service.domain.states import require_label_write, require_not_archived
from service.errors import ApiError
from service.schemas.review import CorrectIn, ReviewItem
from service.store import audit
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer, LabelCorrection
from service.store.db import transaction
from service.store.samples import count_samples, label_point, scale_points
from service.store.schema import MAX_INT, FeedbackLabel, Model, SampleRow, Trait, utcnow


def correct_label(
    ctx: Resources, who: Principal, handle: str, label_id: int, payload: CorrectIn
) -> ReviewItem:
    """The label with its corrected quality. The quality it has already answers it as it stands, storing
    nothing: a repeated request changes nothing more."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="review")
        require_not_archived(model)
        row: SampleRow | FeedbackLabel | None = None
        if 1 <= label_id <= MAX_INT:  # PostgreSQL refuses a larger id even in a comparison
            row = s.scalar(
                select(SampleRow).where(SampleRow.model_id == model.id, SampleRow.id == label_id)
            ) or s.scalar(
                select(FeedbackLabel).where(FeedbackLabel.model_id == model.id, FeedbackLabel.id == label_id)
            )
        if row is None and 1 <= label_id <= MAX_INT:  # a gold answer is corrected as the label it reads as
            answer = s.scalar(
                select(GoldAnswer).where(GoldAnswer.model_id == model.id, GoldAnswer.id == label_id)
            )
            if answer is not None:
                return _correct_answer(s, who, model, answer, payload)
        if row is None:
            raise ApiError(
                404, "label_not_found", f"No label {label_id} of {model.handle}: nothing was corrected."
            )
        if isinstance(row, SampleRow):
            trait = s.get(Trait, row.trait_id)
        else:
            trait = s.scalar(select(Trait).where(Trait.model_id == model.id, Trait.key == row.trait_key))
        assert trait is not None  # deleting a trait deletes its labels
        quality = _corrected_quality(trait, payload)
        kind = "sample" if isinstance(row, SampleRow) else "feedback"
        if quality != row.quality:
            _record(s, who, model, trait, kind, row.id, row.annotator, row.quality, quality, payload.comment)
            if isinstance(row, SampleRow):
                count_samples(s, trait.id, [row.quality], removed=True)
                count_samples(s, trait.id, [quality])
                row.point = label_point(quality, scale_points(trait.scale))
                row.trained_in = None  # what it says now no version has trained on
            row.quality = quality
            row.review, row.reviewed_by, row.review_comment = "accepted", who.annotator, payload.comment
            model.updated_at = utcnow()
            s.flush()
        return with_corrections(s, model, [review_item(kind, row, trait.key)])[0]


def _correct_answer(
    s: Session, who: Principal, model: Model, row: GoldAnswer, payload: CorrectIn
) -> ReviewItem:
    """A gold answer corrected as a label (gold_labels.py): it reads with the corrected quality, accepted
    by the reviewer, and the correction is kept as a label's. Whether it was right stays what its person
    gave (`correct`): accuracy measures them, not the reviewer."""
    [read] = answer_labels(s, model, ids=[row.id])
    trait = s.get(Trait, read.trait_id)
    assert trait is not None
    quality = _corrected_quality(trait, payload)
    if quality != row.quality:
        _record(
            s,
            who,
            model,
            trait,
            read.kind,
            row.id,
            row.annotator,
            row.quality,
            quality,
            payload.comment,
            gold=True,
        )
        row.quality = quality
        row.review, row.reviewed_by, row.review_comment = "accepted", who.annotator, payload.comment
        row.reviewed_at = utcnow()
        model.updated_at = utcnow()
        s.flush()
    [now] = answer_labels(s, model, ids=[row.id])
    return with_corrections(s, model, [answer_item(now)])[0]


def _corrected_quality(trait: Trait, payload: CorrectIn) -> float:
    """The quality a correction gives: as typed, as a label edit takes it (on a scale too), or its point's."""
    if payload.point is None:
        assert payload.quality is not None  # the schema asks for one of the two
        return float(payload.quality)
    return label_quality(trait, payload.quality, payload.point, ("body", "quality"))


def _record(
    s: Session,
    who: Principal,
    model: Model,
    trait: Trait,
    kind: str,
    label_id: int,
    annotator: str | None,
    before: float,
    after: float,
    comment: str | None,
    gold: bool = False,
) -> None:
    """A correction kept (what the annotator gave stays in `label_corrections`) and audited; a training in
    flight may have read the label as it was, so it waits."""
    require_label_write(s, model)
    s.add(
        LabelCorrection(
            model_id=model.id, label_id=label_id, before=before, after=after, corrected_by=who.annotator,
            comment=comment,
        )
    )  # fmt: skip
    detail: JsonObject = {
        f"{kind}_id": label_id,
        "trait": trait.key,
        "annotator": annotator,
        "before": before,
        "after": after,
        "commented": bool(comment),
    }
    if gold:
        detail["gold"] = True
    audit.record(s, who, "label_corrected", model.namespace, model, detail)
