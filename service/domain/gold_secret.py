"""Gold is secret to those who answer it (docs/api.md, "Gold items"): an annotator, who answers gold items
and cannot review, never reads the answer of a gold text by any route, and is never served as gold a text
they voted on.

For an annotator the routes that return votes (samples, the votes export, buffered feedback, agreement's
disagreed texts) leave out, on a text of a trait the annotator has not voted on:

- every vote of a gold text of that trait: its settling vote is the known answer, and colleagues' votes
  give it away as well;
- every settling vote: any settled text may be promoted to gold later, and a settled answer read before
  then would be the answer of a gold item the annotator is served afterwards.

A text the annotator voted on is never served to them as gold (`service/domain/gold_queue.py`), so on it
they see what they saw before. Reviewers and owners, who settle and keep the gold, see everything."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, exists, or_
from sqlalchemy.orm import aliased

from core.json_types import JsonObject
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldItem
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait, content_key


def answerer(who: Principal, model: Model) -> str | None:
    """The annotator name to whom `model`'s gold is secret, or None when `who` sees every vote."""
    if who.role_in(model.namespace) == "annotator":
        return who.annotator
    return None


def sample_visible(me: str, model: Model) -> ColumnElement[bool]:
    """The samples `me` may read: their own, those of a text of a trait they voted on, and the other
    votes that are neither settling votes nor of a gold text."""
    mine = aliased(SampleRow)
    voted = exists().where(
        mine.model_id == model.id,
        mine.trait_id == SampleRow.trait_id,
        content_key(mine.content_sha256) == content_key(SampleRow.content_sha256),  # the index
        mine.content_sha256 == SampleRow.content_sha256,
        mine.annotator == me,
    )
    gold = exists().where(
        GoldItem.model_id == model.id,
        GoldItem.trait_id == SampleRow.trait_id,
        GoldItem.content_sha256 == SampleRow.content_sha256,
    )
    # The usual row, a colleague's plain vote of a text that is not gold, passes on the first lookup.
    return or_(SampleRow.annotator == me, and_(SampleRow.adjudicated.is_(False), ~gold), voted)


def disagreed_visible(text: JsonObject, trait_key: str, me: str, gold: set[tuple[str, str]]) -> bool:
    """Whether `me` may read a disagreed text of agreement (its votes, its counted quality): one they voted
    on, or one neither settled nor gold."""
    if any(v.get("annotator") == me for v in text["votes"]):
        return True
    return not text["adjudicated"] and (trait_key, sha256(text["text"])) not in gold


def feedback_visible(me: str, model: Model) -> ColumnElement[bool]:
    """The buffered labels `me` may read: their own, or any but a gold text's of a trait they have not
    voted on (a buffered label never settles; it keeps its trait's key and its text, not a digest)."""
    mine = aliased(SampleRow)
    trait = aliased(Trait)
    voted = exists().where(
        mine.model_id == model.id,
        mine.annotator == me,
        mine.text == FeedbackLabel.text,
        mine.trait_id == trait.id,
        trait.model_id == model.id,
        trait.key == FeedbackLabel.trait_key,
    )
    gold_trait = aliased(Trait)
    gold = exists().where(
        GoldItem.model_id == model.id,
        GoldItem.text == FeedbackLabel.text,
        GoldItem.trait_id == gold_trait.id,
        gold_trait.model_id == model.id,
        gold_trait.key == FeedbackLabel.trait_key,
    )
    return or_(FeedbackLabel.annotator == me, ~gold, voted)
