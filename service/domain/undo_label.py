"""Undo of a label given on a pool text (docs/api.md "One's own labels"): the caller names the text and the
trait, not a label id. A gold item's answer is withdrawn as a label is (service/domain/gold_labels.py)."""

from __future__ import annotations

from sqlalchemy import select

from service.domain.access import load_model
from service.domain.my_labels import withdraw_my_label
from service.domain.needs import Databases
from service.domain.states import require_not_archived
from service.domain.traits import TraitRefs
from service.errors import ApiError
from service.schemas.my_labels import MyLabelWithdrawn
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer
from service.store.db import transaction
from service.store.gold import gold_of
from service.store.schema import MAX_INT, FeedbackLabel, PoolText, SampleRow


def withdraw_pool_label(
    ctx: Databases, who: Principal, handle: str, text_id: int, trait: str
) -> MyLabelWithdrawn:
    """Withdraw the caller's newest label of pool text `text_id` for `trait` (a vote, a buffered label, or a
    gold item's answer, which reads as one), as `withdraw_my_label` does."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")
        require_not_archived(model)
        found = TraitRefs(s, model).find(trait, ("query", "trait"))
        text = (
            s.scalar(select(PoolText).where(PoolText.id == text_id, PoolText.model_id == model.id))
            if 1 <= text_id <= MAX_INT
            else None
        )
        if text is None:
            raise ApiError(404, "pool_text_not_found", f"No pool text {text_id} in {model.handle}.")
        gold = gold_of(s, found.id, text.content_sha256)
        mine = GoldAnswer.annotator == who.annotator
        answer = s.scalar(select(GoldAnswer.id).where(GoldAnswer.gold_id == gold.id, mine)) if gold else None
        sample = s.scalar(
            select(SampleRow.id)
            .where(
                SampleRow.model_id == model.id,
                SampleRow.trait_id == found.id,
                SampleRow.content_sha256 == text.content_sha256,
                SampleRow.annotator == who.annotator,
            )
            .order_by(SampleRow.id.desc())
            .limit(1)
        )
        buffered = s.scalar(
            select(FeedbackLabel.id)
            .where(
                FeedbackLabel.model_id == model.id,
                FeedbackLabel.trait_key == found.key,
                FeedbackLabel.text == text.text,
                FeedbackLabel.annotator == who.annotator,
            )
            .order_by(FeedbackLabel.id.desc())
            .limit(1)
        )
        handle_now = model.handle
    if answer is not None:  # withdrawn as a label is (gold_labels.py): no longer listed, nor judged
        return withdraw_my_label(ctx, who, handle_now, "sample", answer)
    if buffered is not None:  # given after the model was trained: newer than any vote of the draft
        return withdraw_my_label(ctx, who, handle_now, "feedback", buffered)
    if sample is not None:
        return withdraw_my_label(ctx, who, handle_now, "sample", sample)
    raise ApiError(
        404, "label_not_found", f"No label of yours on pool text {text_id} for {found.key!r} in {handle_now}."
    )
