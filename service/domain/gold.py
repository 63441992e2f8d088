"""Gold items (docs/api.md, "Gold items"): texts of a trait with a known answer, imported or promoted from
settled texts, and each person's accuracy on them.

A gold item is never a vote: training leaves its text out for its trait (service/runs/train.py), the
evaluation set refuses its text and it refuses the set's, and the queue hands it out only as gold
(service/domain/gold_queue.py). Its text has a pool row, the label route's way in. Who sees gold items and
the answers is a reviewer's or an owner's business: an annotator must not learn which texts are checks.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from sqlalchemy import case, delete, func, insert, select
from sqlalchemy.orm import Session

from core.contract import GOLD_CONFIDENCE, MAX_GOLD_ITEMS, GoldOrigin, pole_of
from core.json_types import JsonObject
from service.domain.access import load_model, require_role
from service.domain.needs import Databases, Resources
from service.domain.states import require_not_archived
from service.domain.traits import TraitRefs
from service.errors import ApiError
from service.schemas.gold import (
    GoldAccuracyOut,
    GoldAdded,
    GoldDeleted,
    GoldIn,
    GoldItemOut,
    GoldPerson,
    GoldPromoteIn,
    GoldSetOut,
)
from service.store import audit, quotas
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer, GoldItem
from service.store.db import transaction
from service.store.heldout import evaluation_digests
from service.store.samples import sha256
from service.store.schema import MAX_INT, Model, PoolText, SampleRow, Trait, utcnow


def _writable(s: Session, who: Principal, handle: str) -> Model:
    """Gold is a reviewer's (who settles texts) or an owner's; it keeps texts, so not under ZDR."""
    model = load_model(s, who, handle, write=True, action="review")
    require_not_archived(model)
    if model.zero_data_retention:
        raise ApiError(
            409, "zero_data_retention", "The model has zero-data-retention on: no gold text can be kept."
        )
    return model


def readable(s: Session, who: Principal, handle: str) -> Model:
    """The model, for a reviewer or an owner of its namespace: an annotator never reads gold (it would
    learn which of its texts are checks); another namespace's key: 403 on a public model, else 404."""
    model = load_model(s, who, handle)
    if not who.owns(model.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
    require_role(who, "review", model.namespace)
    return model


#: How many of a group's answers were right (a boolean's SUM is not portable).
_CORRECT = func.sum(case((GoldAnswer.correct.is_(True), 1), else_=0))

Planned = tuple[int, str, str, float]  # (trait id, hash, text, known answer)


def _store(
    ctx: Resources,
    s: Session,
    who: Principal,
    model: Model,
    planned: Sequence[Planned],
    origin: GoldOrigin,
    metadata: Mapping[str, JsonObject] | None = None,
) -> tuple[int, list[int], list[int]]:
    """Add the planned items that are new: (added, duplicate positions, evaluation-set positions). Every
    item's text gets a pool row (the label route's way in), a duplicate's too: a cleared pool comes back."""
    stored = set(
        s.execute(
            select(GoldItem.trait_id, GoldItem.content_sha256).where(GoldItem.model_id == model.id)
        ).tuples()
    )
    held = evaluation_digests(s, model.id, {d for _, d, _, _ in planned})
    rows: dict[tuple[int, str], dict[str, object]] = {}
    duplicates: list[int] = []
    in_set: list[int] = []
    now = utcnow()
    for i, (trait_id, digest, text, quality) in enumerate(planned):
        key = (trait_id, digest)
        if digest in held:
            in_set.append(i)
        elif key in stored or key in rows:
            duplicates.append(i)
        else:
            rows[key] = {
                "model_id": model.id,
                "trait_id": trait_id,
                "text": text,
                "content_sha256": digest,
                "quality": quality,
                "origin": origin,
                "added_by": who.annotator,
                "created_at": now,
            }
    if len(stored) + len(rows) > MAX_GOLD_ITEMS:
        raise ApiError(
            409,
            "gold_set_full",
            f"A model holds at most {MAX_GOLD_ITEMS} gold items; it has {len(stored)} and this request adds "
            f"{len(rows)}. Nothing was stored.",
        )
    texts = {d: t for _, d, t, _ in planned if d not in held}
    pooled = set(
        s.scalars(
            select(PoolText.content_sha256).where(
                PoolText.model_id == model.id, PoolText.content_sha256.in_(set(texts))
            )
        )
    )
    # A gold text enters the pool with the time of its latest import: a time of its own would single gold
    # out to whoever lists the pool (docs/api/team.md, "Gold secrecy").
    imported = s.scalar(select(func.max(PoolText.created_at)).where(PoolText.model_id == model.id)) or now
    given = metadata or {}
    # Its metadata too, when the pool's texts have some: a text without any among them would stand out.
    new_pool = [
        {"model_id": model.id, "text": t, "content_sha256": d, "created_at": imported, "meta": given.get(d)}
        for d, t in texts.items()
        if d not in pooled
    ]
    chars = quotas.chars_of(str(r["text"]) for r in rows.values()) + quotas.chars_of(
        str(r["text"]) for r in new_pool
    )
    quotas.require_namespace_room(s, ctx.settings, model.namespace, chars)
    if rows:
        s.execute(insert(GoldItem), list(rows.values()))
    if new_pool:
        s.execute(insert(PoolText), new_pool)
    detail: JsonObject = {"origin": origin, "added": len(rows), "total": len(stored) + len(rows)}
    if rows:
        audit.record(s, who, "gold_changed", model.namespace, model, detail)
    return len(rows), duplicates, in_set


def add_gold(ctx: Resources, who: Principal, handle: str, payload: GoldIn) -> GoldAdded:
    with transaction(ctx.sessions) as s:
        model = _writable(s, who, handle)
        refs = TraitRefs(s, model)
        planned = [
            (refs.find(x.trait, ("body", "items", i, "trait")).id, sha256(x.text), x.text, float(x.quality))
            for i, x in enumerate(payload.items)
        ]
        given = {sha256(x.text): x.metadata for x in payload.items if x.metadata is not None}
        added, duplicates, in_set = _store(ctx, s, who, model, planned, "imported", given)
        total = _count(s, model.id)
        return GoldAdded(
            handle=model.handle, added=added, total=total, duplicates=duplicates, in_evaluation_set=in_set
        )


def promote(ctx: Resources, who: Principal, handle: str, payload: GoldPromoteIn) -> GoldAdded:
    """Up to `count` of the trait's settled texts (their settling vote is the known answer), at random among
    those not gold yet nor in the evaluation set."""
    with transaction(ctx.sessions) as s:
        model = _writable(s, who, handle)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        settled: dict[str, tuple[str, float]] = {}
        for digest, text, quality in s.execute(
            select(SampleRow.content_sha256, SampleRow.text, SampleRow.quality)
            .where(SampleRow.trait_id == trait.id, SampleRow.adjudicated.is_(True))
            .order_by(SampleRow.id)
        ).tuples():
            settled[digest] = (text, quality)  # the latest settling vote counts, as training counts it
        gold = set(s.scalars(select(GoldItem.content_sha256).where(GoldItem.trait_id == trait.id)))
        held = evaluation_digests(s, model.id, settled)
        candidates = sorted(
            d for d, (_, q) in settled.items() if d not in gold and d not in held and pole_of(q) != "neutral"
        )
        chosen = random.SystemRandom().sample(candidates, min(payload.count, len(candidates)))
        planned = [(trait.id, d, *settled[d]) for d in chosen]
        added, _, _ = _store(ctx, s, who, model, planned, "promoted")
        return GoldAdded(handle=model.handle, added=added, total=_count(s, model.id))


def _count(s: Session, model_id: int) -> int:
    return s.scalar(select(func.count()).where(GoldItem.model_id == model_id)) or 0


def list_gold(ctx: Databases, who: Principal, handle: str) -> GoldSetOut:
    with transaction(ctx.reads) as s:
        model = readable(s, who, handle)
        tally = {
            gid: (int(n), int(ok or 0))
            for gid, n, ok in s.execute(
                select(GoldAnswer.gold_id, func.count(), _CORRECT)
                .where(GoldAnswer.model_id == model.id)
                .group_by(GoldAnswer.gold_id)
            ).tuples()
        }
        items = [
            GoldItemOut(
                id=g.id,
                trait=key,
                text=g.text,
                quality=g.quality,
                origin=g.origin,
                added_by=g.added_by,
                created_at=g.created_at,
                answers=tally.get(g.id, (0, 0))[0],
                correct=tally.get(g.id, (0, 0))[1],
            )
            for g, key in s.execute(
                select(GoldItem, Trait.key)
                .join(Trait, Trait.id == GoldItem.trait_id)
                .where(GoldItem.model_id == model.id)
                .order_by(GoldItem.id)
            ).tuples()
        ]
        return GoldSetOut(handle=model.handle, total=len(items), items=items)


def delete_gold(ctx: Databases, who: Principal, handle: str, gold_id: int) -> GoldDeleted:
    """A gold item and its answers go (a wrong known answer made them meaningless); its pool row stays, an
    ordinary text again."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="review")
        require_not_archived(model)
        found = 1 <= gold_id <= MAX_INT and (
            s.scalar(select(GoldItem.id).where(GoldItem.id == gold_id, GoldItem.model_id == model.id))
            is not None
        )
        if not found:
            raise ApiError(404, "gold_item_not_found", f"No gold item {gold_id} in {model.handle}.")
        # The answers are people's labels of the text (their own labels' count has them): the event names
        # each one it removes and whose it was. Votes of the text are samples and stay.
        answers: list[JsonObject] = [
            {"id": aid, "annotator": name}
            for aid, name in s.execute(
                select(GoldAnswer.id, GoldAnswer.annotator)
                .where(GoldAnswer.gold_id == gold_id)
                .order_by(GoldAnswer.id)
            ).tuples()
        ]
        s.execute(delete(GoldAnswer).where(GoldAnswer.gold_id == gold_id))
        s.execute(delete(GoldItem).where(GoldItem.id == gold_id))
        detail: JsonObject = {"deleted": gold_id, "total": _count(s, model.id), "answers": answers}
        audit.record(s, who, "gold_changed", model.namespace, model, detail)
        return GoldDeleted(handle=model.handle, deleted=1)


def accuracy(ctx: Databases, who: Principal, handle: str) -> GoldAccuracyOut:
    with transaction(ctx.reads) as s:
        model = readable(s, who, handle)
        rows = s.execute(
            select(GoldAnswer.annotator, func.count(), _CORRECT)
            .where(GoldAnswer.model_id == model.id)
            .group_by(GoldAnswer.annotator)
            .order_by(GoldAnswer.annotator)
        ).tuples()
        people = [person(name, int(n), int(ok or 0), model.gold_threshold) for name, n, ok in rows]
        return GoldAccuracyOut(
            handle=model.handle,
            gold_rate=model.gold_rate,
            gold_threshold=model.gold_threshold,
            confidence=GOLD_CONFIDENCE,
            gold_items=_count(s, model.id),
            people=people,
        )


def person(annotator: str, answered: int, correct: int, threshold: float) -> GoldPerson:
    """One person's accuracy with Wilson's score interval (right at 0 and n, unlike the normal one), flagged
    when even its upper end is under `threshold`: a careful person's few unlucky answers are no flag."""
    from scipy.stats import binomtest  # loaded by a first use: no service start pays for it

    ci = binomtest(correct, answered).proportion_ci(confidence_level=GOLD_CONFIDENCE, method="wilson")
    low, high = float(ci.low), float(ci.high)
    return GoldPerson(
        annotator=annotator,
        answered=answered,
        correct=correct,
        accuracy=correct / answered,
        low=low,
        high=high,
        flagged=high < threshold,
    )
