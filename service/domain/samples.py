"""Samples: as the engine sees them (read, add without duplicates, feedback a retraining may use), and the
samples resource (add, list, edit, delete)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.contract import Aggregation, Provenance, is_positive
from core.engine.types import Sample, TraitSpec
from service.db import transaction
from service.domain.access import load_model
from service.domain.traits import TraitRefs
from service.errors import ApiError
from service.keys import Principal
from service.schemas import SampleDeleted, SampleIds, SampleIn, SampleOut, SamplePage, SamplePatch
from service.states import require_untrained
from service.tables import MAX_INT, FeedbackLabel, Model, SampleRow, Trait, utcnow
from service.testhooks import pause
from service.views import sample_out

#: Rows per INSERT and hashes per IN (…) list: under SQLite's and psycopg2's bound-parameter limits.
CHUNK = 500

if TYPE_CHECKING:  # the context builds the run executor, which reads samples through this module
    from service.context import Context


def held_feedback(feedback: list[FeedbackLabel], samples: list[Sample]) -> list[FeedbackLabel]:
    """Feedback a retraining cannot use yet: labels of a zero-shot trait (no samples) that cover one
    pole only would make the trait untrainable, so they stay buffered until the other pole has some."""
    poles: dict[str, set[bool]] = {}
    labels = [*((x.trait, x.quality) for x in samples), *((f.trait_key, f.quality) for f in feedback)]
    for key, quality in labels:
        poles.setdefault(key, set()).add(is_positive(quality))
    return [f for f in feedback if len(poles[f.trait_key]) < 2]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trait_specs(traits: list[Trait]) -> list[TraitSpec]:
    return [
        TraitSpec(
            key=t.key,
            name=t.name,
            positive_label=t.positive_label,
            negative_label=t.negative_label,
            description=t.description,
            aggregation=cast(Aggregation, t.aggregation),
        )
        for t in traits
    ]


def load_traits(session: Session, model_id: int) -> list[Trait]:
    return list(session.scalars(select(Trait).where(Trait.model_id == model_id).order_by(Trait.id)))


def load_samples(session: Session, model_id: int) -> list[Sample]:
    rows = session.execute(
        select(SampleRow.id, Trait.key, SampleRow.text, SampleRow.quality)
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model_id)
        .order_by(SampleRow.id)
    ).all()
    return [Sample(trait=key, text=text, quality=q, id=sid) for sid, key, text, q in rows]


def add_samples(
    session: Session,
    model_id: int,
    trait_ids: dict[str, int],
    samples: Sequence[Sample],
    provenance: str,
    source_urls: Sequence[str | None] | None = None,
) -> list[int]:
    """Insert samples, skipping exact duplicates (same trait, text, quality); returns ids in input order.

    A batch costs the same whatever the model holds (issue 36): the stored rows among the batch's texts come
    from the (model, trait, content hash) index in a few queries, and the new rows go in with one
    executemany. `source_urls` (per sample) is set on new rows, and on stored ones that have none yet.
    """
    urls = list(source_urls) if source_urls is not None else [None] * len(samples)
    keys = [(trait_ids[x.trait], sha256(x.text), float(x.quality)) for x in samples]
    stored = _stored_ids(session, model_id, keys)
    new: dict[tuple[int, str, float], dict[str, Any]] = {}
    fill: dict[int, str] = {}  # stored rows without a source URL that this batch gives one
    now = utcnow()
    for x, key, url in zip(samples, keys, urls, strict=True):
        if key in stored:
            sid, has_url = stored[key]
            if url is not None and not has_url:
                fill.setdefault(sid, url)
            continue
        row = new.get(key)
        if row is None:
            trait_id, digest, quality = key
            new[key] = {
                "model_id": model_id,
                "trait_id": trait_id,
                "text": x.text,
                "quality": quality,
                "provenance": provenance,
                "source_url": url,
                "content_sha256": digest,
                "created_at": now,
            }
        elif row["source_url"] is None:
            row["source_url"] = url
    if new:
        # executemany (no RETURNING: with it, SQLite would insert row by row), then the new ids by the index.
        session.execute(insert(SampleRow), list(new.values()))
        stored.update(_stored_ids(session, model_id, list(new)))
        counted: dict[int, list[int]] = {}
        for trait_id, _, quality in new:
            counted.setdefault(trait_id, [0, 0])
            counted[trait_id][0] += 1
            counted[trait_id][1] += is_positive(quality)
        for trait_id, (n, positive) in counted.items():
            count_samples(session, trait_id, n, positive)
    for sid, url in fill.items():
        session.execute(
            update(SampleRow)
            .where(SampleRow.id == sid, SampleRow.source_url.is_(None))
            .values(source_url=url)
            .execution_options(synchronize_session=False)
        )
    return [stored[key][0] for key in keys]


def count_samples(session: Session, trait_id: int, n: int, positive: int) -> None:
    """Samples added to (or, negative, removed from) a trait: its counts (`Trait.sample_count`,
    `positive_samples`) follow every insert, edit and deletion of a sample, so no read counts rows."""
    session.execute(
        update(Trait)
        .where(Trait.id == trait_id)
        .values(sample_count=Trait.sample_count + n, positive_samples=Trait.positive_samples + int(positive))
        .execution_options(synchronize_session=False)
    )


def _stored_ids(
    session: Session, model_id: int, keys: Sequence[tuple[int, str, float]]
) -> dict[tuple[int, str, float], tuple[int, bool]]:
    """{(trait id, content hash, quality): (the oldest stored sample's id, whether it has a source URL)} for
    the stored samples among `keys`: per trait, one indexed query per chunk of hashes."""
    digests: dict[int, set[str]] = {}
    for trait_id, digest, _ in keys:
        digests.setdefault(trait_id, set()).add(digest)
    found: dict[tuple[int, str, float], tuple[int, bool]] = {}
    for trait_id, wanted in digests.items():
        ordered = sorted(wanted)
        for start in range(0, len(ordered), CHUNK):
            rows = session.execute(
                select(SampleRow.id, SampleRow.content_sha256, SampleRow.quality, SampleRow.source_url).where(
                    SampleRow.model_id == model_id,
                    SampleRow.trait_id == trait_id,
                    SampleRow.content_sha256.in_(ordered[start : start + CHUNK]),
                )  # no ORDER BY: SQLite would then walk the model's rows in id order instead of this index
            ).tuples()
            for sid, digest, quality, url in rows:
                key = (trait_id, digest, quality)
                if key not in found or sid < found[key][0]:
                    found[key] = (sid, url is not None)
    return found


# -- the samples resource: add, list, edit, delete (edits only on an untrained model) -----------------------


def add_sample_batch(ctx: Context, who: Principal, handle: str, items: list[SampleIn]) -> SampleIds:
    """All or none; a sample already stored (same trait, text, quality) answers with its id."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_untrained(s, model)
        refs = TraitRefs(s, model)
        resolved = [
            Sample(refs.find(x.trait, ("body", "samples", i, "trait")).key, x.text, x.quality)
            for i, x in enumerate(items)
        ]
        urls = [x.source_url for x in items]
        ids = add_samples(s, model.id, refs.ids, resolved, "authored", urls)
        model.updated_at = utcnow()
        pause(ctx.settings.test_hooks.slow_samples_commit, model.handle, f"samples commit ({len(ids)} rows)")
        return SampleIds(ids=ids)


def list_samples(
    ctx: Context,
    who: Principal,
    handle: str,
    trait: str | None,
    provenance: Provenance | None,
    limit: int,
    cursor: str | None,
) -> SamplePage:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"samples|{model.id}|{trait or ''}|{provenance or ''}"
        after = ctx.cursors.position(cursor, scope) or 0  # ids start at 1
        q = (
            select(SampleRow, Trait.key)
            .join(Trait, Trait.id == SampleRow.trait_id)
            .where(SampleRow.model_id == model.id, SampleRow.id > after)
        )
        if trait is not None:
            # The trait's id first: its samples then come from the (model, trait, id) index in id order
            # (through the name, SQLite walked every sample of the model for a rare trait).
            named = list(
                s.scalars(
                    select(Trait.id).where(
                        Trait.model_id == model.id, (Trait.key == trait) | (Trait.name == trait)
                    )
                )
            )
            q = q.where(SampleRow.trait_id == named[0] if len(named) == 1 else SampleRow.trait_id.in_(named))
        if provenance is not None:
            q = q.where(SampleRow.provenance == provenance)
        rows = s.execute(q.order_by(SampleRow.id).limit(limit + 1)).all()
        page = rows[:limit]
        items = [sample_out(row, key) for row, key in page]
    next_cursor = ctx.cursors.encode(scope, page[-1][0].id) if len(rows) > limit else None
    return SamplePage(items=items, limit=limit, next_cursor=next_cursor)


def _find_sample(s: Session, model: Model, sample_id: int) -> SampleRow:
    """The model's sample, or 404 (also for an id of another model: ids do not reveal other models)."""
    row = None
    if 1 <= sample_id <= MAX_INT:
        row = s.scalar(select(SampleRow).where(SampleRow.id == sample_id, SampleRow.model_id == model.id))
    if row is None:
        raise ApiError(404, "sample_not_found", f"No sample {sample_id} in {model.handle}.")
    return row


def update_sample(ctx: Context, who: Principal, handle: str, sample_id: int, patch: SamplePatch) -> SampleOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require_untrained(s, model)
        trait = s.get(Trait, row.trait_id)
        assert trait is not None
        if patch.trait is not None:
            trait = TraitRefs(s, model).find(patch.trait, ("body", "trait"))
        text = patch.text if patch.text is not None else row.text
        quality = float(patch.quality) if patch.quality is not None else row.quality
        if (trait.id, text, quality) == (row.trait_id, row.text, row.quality):
            return sample_out(row, trait.key)  # nothing changes: a repeat of an edit is harmless
        digest = sha256(text)
        # As on create, two identical samples (trait, text, quality) are never stored: an edit that makes
        # this one identical to a stored one removes it and answers with the stored one (its id).
        same = s.scalar(
            select(SampleRow).where(
                SampleRow.model_id == model.id,
                SampleRow.trait_id == trait.id,
                SampleRow.content_sha256 == digest,
                SampleRow.quality == quality,
                SampleRow.id != row.id,
            )
        )
        count_samples(s, row.trait_id, -1, -is_positive(row.quality))
        if same is not None:
            s.delete(row)
            model.updated_at = utcnow()
            return sample_out(same, trait.key)
        count_samples(s, trait.id, 1, is_positive(quality))
        row.trait_id, row.text, row.quality, row.content_sha256 = trait.id, text, quality, digest
        row.provenance = "authored"  # the caller now supplies it (discover/synthesize fingerprints see it)
        model.updated_at = utcnow()
        s.flush()
        return sample_out(row, trait.key)


def delete_sample(ctx: Context, who: Principal, handle: str, sample_id: int) -> SampleDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require_untrained(s, model)
        count_samples(s, row.trait_id, -1, -is_positive(row.quality))
        s.delete(row)
        model.updated_at = utcnow()
        return SampleDeleted(handle=model.handle, id=sample_id, deleted=True)
