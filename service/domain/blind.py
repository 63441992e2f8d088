"""Blind labelling (docs/api.md, "Blind labelling"): on a model whose owner set `blind_labelling`, an
annotator sees colleagues' votes, unsure marks and comments on a text only once they voted on it, so the
first judgement of each is their own. Reviewers and owners, who settle and manage, see everything. Every
route that returns votes or notes asks here, in the service: hiding them in a page would hide nothing."""

from __future__ import annotations

from sqlalchemy import ColumnElement, exists, or_
from sqlalchemy.orm import InstrumentedAttribute, aliased

from service.store.api_keys import Principal
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait


def blind_for(who: Principal, model: Model) -> str | None:
    """The annotator name whose view is blinded on `model`, or None when `who` sees every vote."""
    if model.blind_labelling and who.role_in(model.namespace) == "annotator":
        return who.annotator
    return None


def seen(
    me: str,
    model: Model,
    trait_id: InstrumentedAttribute[int],
    digest: InstrumentedAttribute[str],
    author: InstrumentedAttribute[str] | InstrumentedAttribute[str | None],
) -> ColumnElement[bool]:
    """The rows (of samples, unsure marks or comments) `me` may see: their own, or on a text of a trait
    they voted on."""
    mine = aliased(SampleRow)
    voted = exists().where(
        mine.model_id == model.id,
        mine.trait_id == trait_id,
        mine.content_sha256 == digest,
        mine.annotator == me,
    )
    return or_(author == me, voted)


def feedback_seen(me: str, model: Model) -> ColumnElement[bool]:
    """The buffered feedback labels `me` may see: their own, or on a text of a trait they voted on (a label
    keeps its trait's key and its text, not the digest a vote keeps)."""
    mine = aliased(SampleRow)
    voted = exists().where(
        mine.model_id == model.id,
        mine.annotator == me,
        mine.text == FeedbackLabel.text,
        mine.trait_id == Trait.id,
        Trait.model_id == model.id,
        Trait.key == FeedbackLabel.trait_key,
    )
    return or_(FeedbackLabel.annotator == me, voted)
