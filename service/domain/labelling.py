"""Label a pool text: the labelling path of a team, never refused for the model's state of the moment.

A person labels what they were handed a while ago; meanwhile a colleague may have started a training, or a
training may have ended. `POST …/samples` keeps the spec's rule (draft only) for imports; this route stores
the label wherever the model can take it now: a sample of an untrained (or reopened) draft, else the
feedback buffer, which the next version takes in (an automatic retraining, or the draft's next training).
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import ReviewStatus
from core.engine.types import Sample
from core.json_types import JsonObject
from core.model_states import TRAINING_RUNS, can
from service.domain import gold_queue
from service.domain.access import load_model
from service.domain.claims import require_room
from service.domain.gold_labels import buffer_size
from service.domain.needs import Resources
from service.domain.scales import label_quality
from service.domain.scoring import retrain_if_full
from service.domain.states import require_not_archived
from service.domain.traits import TraitRefs
from service.domain.views import labelled_answer
from service.errors import ApiError
from service.schemas.pool import BulkLabelIn, BulkLabelled, LabelIn, Labelled
from service.store import audit, claims, ledger, quotas
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.heldout import evaluation_digests
from service.store.review import accept_by_agreement
from service.store.samples import add_samples
from service.store.schema import MAX_INT, FeedbackLabel, Model, PoolText, Trait, utcnow
from service.store.teams import label_status


def label_pool_text(ctx: Resources, who: Principal, handle: str, text_id: int, payload: LabelIn) -> Labelled:
    """Store the caller's label of pool text `text_id`, release their claim on it, say where it went."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")
        require_not_archived(model)
        row = None
        if 1 <= text_id <= MAX_INT:
            row = s.scalar(select(PoolText).where(PoolText.id == text_id, PoolText.model_id == model.id))
        if row is None:  # checked before anything is written: nothing of the label is stored
            raise ApiError(
                404,
                "pool_text_not_found",
                f"No pool text {text_id} in {model.handle}: it was deleted from the pool (a claim on it "
                "ended with it); the label was not stored.",
            )
        _require_not_held_out(s, model, row)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        quality = label_quality(trait, payload.quality, payload.point, ("body", "quality"))
        status = label_status(s, who, model)
        if (gold := gold_queue.answer(s, model, trait, row, who.annotator, quality, status)) is not None:
            claims.release(s, model.id, text_id, who.annotator, trait.key)
            # An answer read as a buffered label fills the buffer as one (gold_labels.py).
            run_id = None if can("edit", model.state) else retrain_if_full(ctx, s, model)
            started = run_id is not None
            out = gold_queue.labelled(s, model, trait, text_id, quality, gold, payload.point, started)
        else:
            out, run_id = _label(ctx, s, who, model, trait, row, quality, payload.point)
    if run_id is not None:
        ctx.enqueue(run_id)
    return out


def _label(
    ctx: Resources,
    s: Session,
    who: Principal,
    model: Model,
    trait: Trait,
    row: PoolText,
    quality: float,
    point: int | None,
) -> tuple[Labelled, str | None]:
    """Store an ordinary label of the pool text: the route's answer, and the retraining it started."""
    text_id = row.id
    require_room(s, model, trait, who.annotator, row)
    # A training in flight read its samples and buffer when it started: a label now goes after it.
    in_flight = ledger.in_flight(s, model)
    training = in_flight is not None and in_flight.kind in TRAINING_RUNS
    run_id = None
    quotas.require_namespace_room(s, ctx.settings, model.namespace, len(row.text))
    status = label_status(s, who, model)
    stored_as, label_id = _store(s, model, trait, row, quality, who.annotator, status)
    if stored_as == "feedback":
        run_id = retrain_if_full(ctx, s, model)
    quotas.require_person_room(s, ctx.settings, who, model)
    claims.release(s, model.id, text_id, who.annotator, trait.key)
    model.updated_at = utcnow()
    voters = claims.votes_on(s, model.id, trait.id, trait.key, {row.content_sha256}).get(row.content_sha256)
    votes = voters.count if voters else 1
    out = labelled_answer(
        s, model, trait.key, text_id, quality, point, stored_as, label_id, training, votes, run_id is not None
    )
    return out, run_id


def _require_not_held_out(s: Session, model: Model, row: PoolText) -> None:
    """A text of the evaluation set is never labelled: a label would train the next version on it. Checked
    before anything is written; the text, its claims and every stored label stay as they are."""
    if evaluation_digests(s, model.id, [row.content_sha256]):
        raise ApiError(
            409,
            "pool_text_in_evaluation_set",
            f"Pool text {row.id} of {model.handle} is a text of the evaluation set, which is never labelled "
            "nor trained on: the label was not stored. Label the next text.",
        )


def _store(
    s: Session,
    model: Model,
    trait: Trait,
    row: PoolText,
    quality: float,
    annotator: str,
    status: ReviewStatus,
) -> tuple[Literal["sample", "feedback"], int]:
    """The label where the model can take it now: a sample of an untrained (or reopened) draft, else the
    feedback buffer; where it went, and its row's id."""
    if can("edit", model.state):
        label = Sample(trait.key, row.text, quality)
        label_id = add_samples(
            s, model.id, {trait.key: trait.id}, [label], "authored", annotators=[annotator], review=status
        )[0]
        stored_as: Literal["sample", "feedback"] = "sample"
    else:
        if model.zero_data_retention:
            raise ApiError(
                409,
                "zero_data_retention",
                "The model has zero-data-retention on: a trained model's labels would wait as texts.",
            )
        stored_as = "feedback"
        label_id = _buffer(s, model, trait.key, row.text, quality, annotator, status)
    if status == "pending":
        accept_by_agreement(s, model, trait, row.text)
    return stored_as, label_id


def label_pool_texts(ctx: Resources, who: Principal, handle: str, payload: BulkLabelIn) -> BulkLabelled:
    """One label of the caller's for each of `payload.ids` (a reviewer's or an owner's: a selection labelled
    at once is a judgement over texts nobody else read); a text without room for the caller's vote, or no
    longer in the pool, is skipped. One audit event for the whole selection."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="review")
        require_not_archived(model)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        quality = label_quality(trait, payload.quality, payload.point, ("body", "quality"))
        ids = list(dict.fromkeys(payload.ids))
        rows = {
            r.id: r
            for r in s.scalars(
                select(PoolText).where(
                    PoolText.model_id == model.id, PoolText.id.in_([i for i in ids if 1 <= i <= MAX_INT])
                )
            )
        }
        # Texts of the evaluation set are skipped as texts no longer in the pool are: never labelled.
        held = evaluation_digests(s, model.id, [r.content_sha256 for r in rows.values()])
        status = label_status(s, who, model)
        stored_as: Literal["sample", "feedback"] = "sample" if can("edit", model.state) else "feedback"
        labelled: list[int] = []
        skipped: list[int] = []
        for pid in ids:
            row = rows.get(pid)
            if row is None or row.content_sha256 in held:
                skipped.append(pid)
                continue
            try:
                require_room(s, model, trait, who.annotator, row)
            except ApiError:  # colleagues' votes and claims fill it: not the caller's to add to
                skipped.append(pid)
                continue
            quotas.require_namespace_room(s, ctx.settings, model.namespace, len(row.text))
            stored_as, _ = _store(s, model, trait, row, quality, who.annotator, status)
            claims.release(s, model.id, pid, who.annotator, trait.key)
            labelled.append(pid)
        run_id = retrain_if_full(ctx, s, model) if labelled and stored_as == "feedback" else None
        quotas.require_person_room(s, ctx.settings, who, model)
        if labelled:
            model.updated_at = utcnow()
            detail: JsonObject = {"trait": trait.key, "quality": quality, "texts": len(labelled)}
            audit.record(s, who, "pool_labelled", model.namespace, model, detail)
        buffered = buffer_size(s, model)
        out = BulkLabelled(
            handle=model.handle,
            trait=trait.key,
            quality=quality,
            labelled=labelled,
            skipped=skipped,
            stored_as=stored_as,
            buffered_feedback=buffered,
            retraining=run_id is not None,
        )
    if run_id is not None:
        ctx.enqueue(run_id)
    return out


def _buffer(
    s: Session, model: Model, trait_key: str, text: str, quality: float, annotator: str, review: ReviewStatus
) -> int:
    """The label in the feedback buffer; a repeat of a label buffered already (a retried request) answers
    with that one, so the route is safe to repeat, as a sample is."""
    stored = s.scalar(
        select(FeedbackLabel.id)
        .where(
            FeedbackLabel.model_id == model.id,
            FeedbackLabel.trait_key == trait_key,
            FeedbackLabel.text == text,
            FeedbackLabel.quality == quality,
            FeedbackLabel.annotator == annotator,
        )
        .limit(1)
    )
    if stored is not None:
        return stored
    row = FeedbackLabel(
        model_id=model.id,
        trait_key=trait_key,
        text=text,
        quality=quality,
        annotator=annotator,
        created_at=utcnow(),
        review=review,
    )
    s.add(row)
    s.flush()
    return row.id
