"""GET /models/{h}/agreement: how far the annotators of a model's labels agree, per trait (docs/api.md,
"Agreement"); and the numbers a zero-data-retention model keeps when its votes are purged."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.engine.agreement import trait_agreement
from core.engine.votes import Vote
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.blind import blind_for
from service.domain.gold_labels import answer_labels, as_agreement_vote, counted_answers
from service.domain.gold_secret import answerer, disagreed_visible
from service.domain.needs import Databases
from service.domain.traits import TraitRefs
from service.schemas.agreement import AgreementOut
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.gold import gold_keys
from service.store.samples import scale_points, sha256
from service.store.schema import FeedbackLabel, Model, PoolText, SampleRow, Trait, utcnow
from service.store.votes import in_order, label_votes


def get_agreement(ctx: Databases, who: Principal, handle: str, trait: str | None, limit: int) -> AgreementOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        refs = TraitRefs(s, model)
        traits = [refs.find(trait, ("query", "trait"))] if trait is not None else refs.traits
        labels = label_votes(s, model.id)
        buffered = set(s.scalars(select(FeedbackLabel.id).where(FeedbackLabel.model_id == model.id)))
        # Gold answers count as the labels they read as (gold_labels.py): a buffered one's vote is no sample.
        counted = counted_answers(answer_labels(s, model), labels)
        votes = in_order(labels, map(as_agreement_vote, counted))
        buffered |= {a.id for a in counted if a.kind == "feedback"}
        kept = model.kept_agreement if model.zero_data_retention else None
        answers = answerer(who, model)
        # A gold text is secret where it has votes of its own; one answered only reads as any text.
        voted = {(v.trait, sha256(v.text)) for v in labels}
        gold = gold_keys(s, model.id) & voted if answers is not None else set()
    if kept is not None and not votes:  # purged at training: the numbers kept just before
        stored = kept.get("traits", {})
        return AgreementOut.model_validate(
            {
                "handle": model.handle,
                "traits": {t.key: stored[t.key] for t in traits if t.key in stored},
                "stored_at": kept.get("stored_at"),
            }
        )
    per_trait = _per_trait(traits, votes, limit, buffered=buffered)
    if (me := blind_for(who, model)) is not None:  # blind: only the disagreements one took part in
        for body in per_trait.values():
            assert isinstance(body, dict) and isinstance(body["disagreed"], list)
            body["disagreed"] = [t for t in body["disagreed"] if _voted(t, me)]
    if answers is not None:  # no settled or gold answer to one who answers gold: its figures stay whole
        for key, body in per_trait.items():
            assert isinstance(body, dict) and isinstance(body["disagreed"], list)
            body["disagreed"] = [t for t in body["disagreed"] if disagreed_visible(t, key, answers, gold)]
    with transaction(ctx.reads) as s:
        _add_metadata(s, model.id, per_trait)
    return AgreementOut.model_validate({"handle": model.handle, "traits": per_trait, "stored_at": None})


def _add_metadata(s: Session, model_id: int, per_trait: JsonObject) -> None:
    """Each disagreed text's metadata (docs/api.md "Text metadata"): a sample's of the text that has some,
    else its pool text's; absent when neither has any."""
    listed = [t for body in per_trait.values() for t in body["disagreed"]]
    digests = {sha256(t["text"]) for t in listed}
    if not digests:
        return
    found: dict[str, JsonObject] = {}
    for table in (PoolText, SampleRow):  # a sample's (the file's row of the vote) wins over the pool's
        rows = s.execute(
            select(table.content_sha256, table.meta).where(
                table.model_id == model_id, table.content_sha256.in_(digests), table.meta.is_not(None)
            )
        ).tuples()
        found.update({digest: meta for digest, meta in rows if meta})
    for text in listed:
        text["metadata"] = found.get(sha256(text["text"]))


def _voted(text: object, me: str) -> bool:
    """Whether `me` has a vote among a disagreed text's."""
    votes = text.get("votes") if isinstance(text, dict) else None
    return isinstance(votes, list) and any(isinstance(v, dict) and v.get("annotator") == me for v in votes)


def _per_trait(
    traits: list[Trait],
    votes: list[Vote],
    limit: int,
    texts: bool = True,
    buffered: frozenset[int] | set[int] = frozenset(),
) -> JsonObject:
    by_trait: dict[str, list[Vote]] = {t.key: [] for t in traits}
    scaled = {t.key for t in traits if scale_points(t.scale) is not None}
    for vote in votes:
        if vote.trait in by_trait:
            by_trait[vote.trait].append(vote)
    out = {}
    for key, mine in by_trait.items():
        body = trait_agreement(mine, limit=limit, ordinal=key in scaled).as_dict(texts=texts)
        for text in body["disagreed"]:
            for vote in text["votes"]:  # a buffered feedback label's vote is no sample yet
                if vote["sample_id"] in buffered:
                    vote["sample_id"] = None
        out[key] = body
    return out


def keep_agreement(s: Session, model: Model) -> None:
    """Zero-data-retention: before the votes are purged, keep their agreement as numbers (no text)."""
    votes = label_votes(s, model.id)
    if not votes:
        return  # nothing to purge: what was kept before stays
    traits = TraitRefs(s, model).traits
    numbers = _per_trait(traits, votes, limit=0, texts=False)
    model.kept_agreement = {"stored_at": utcnow().isoformat(), "traits": numbers}
