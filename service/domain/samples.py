"""The samples resource: add, list, edit, delete (edits only on an untrained model). The samples as the engine
sees them (read, add without duplicates) are service/store/samples.py's."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import Provenance
from core.engine.types import Sample
from service.config.testhooks import pause
from service.domain.access import load_model
from service.domain.needs import Databases, Resources
from service.domain.states import require
from service.domain.traits import TraitRefs
from service.domain.views import sample_out
from service.errors import ApiError
from service.schemas.samples import SampleDeleted, SampleIds, SampleIn, SampleOut, SamplePage, SamplePatch
from service.store.api_keys import Principal, reserved_annotators
from service.store.db import transaction
from service.store.heldout import evaluation_digests
from service.store.samples import add_samples, count_samples, sha256
from service.store.tables import MAX_INT, Model, SampleRow, Trait, content_key, key_of, utcnow


def label_authors(s: Session, who: Principal, given: Sequence[str | None], where: str) -> list[str]:
    """Each label's annotator: the one given, else the calling key's annotator name. 422
    `annotator_reserved` when one is another key's (`where`: the list's name in the body)."""
    names = [name or who.annotator for name in given]
    taken = set(reserved_annotators(s, who, set(names)))
    if taken:
        bad = [i for i, name in enumerate(names) if name in taken]
        raise ApiError(
            422,
            "annotator_reserved",
            f"{names[bad[0]]!r} is the annotator name of another key: each key posts its own votes "
            "(an external rater needs a name no key has).",
            details=[
                {
                    "loc": ["body", where, i, "annotator"],
                    "msg": "another key's name",
                    "type": "annotator_reserved",
                }
                for i in bad
            ],
        )
    return names


# -- the samples resource: add, list, edit, delete (edits only on an untrained model) -----------------------


def add_sample_batch(ctx: Resources, who: Principal, handle: str, items: list[SampleIn]) -> SampleIds:
    """All or none; a sample already stored (same trait, text, quality) answers with its id."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require(s, model, "edit")
        refs = TraitRefs(s, model)
        resolved = [
            Sample(refs.find(x.trait, ("body", "samples", i, "trait")).key, x.text, x.quality)
            for i, x in enumerate(items)
        ]
        authors = label_authors(s, who, [x.annotator for x in items], "samples")
        ids = add_samples(
            s,
            model.id,
            refs.ids,
            resolved,
            "authored",
            annotators=authors,
            adjudicated=[x.adjudicated for x in items],
            source_urls=[x.source_url for x in items],
            source_ids=[x.source_id for x in items],
        )
        # Stored all the same (a sample is the caller's to give), but such a text is no longer held out.
        digests = [sha256(x.text) for x in resolved]
        held = evaluation_digests(s, model.id, digests)
        model.updated_at = utcnow()
        pause(ctx.settings.test_hooks.slow_samples_commit, model.handle, f"samples commit ({len(ids)} rows)")
        return SampleIds(ids=ids, in_evaluation_set=sum(d in held for d in digests))


def list_samples(
    ctx: Resources,
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


def update_sample(
    ctx: Databases, who: Principal, handle: str, sample_id: int, patch: SamplePatch
) -> SampleOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require(s, model, "edit")
        trait = s.get(Trait, row.trait_id)
        assert trait is not None
        if patch.trait is not None:
            trait = TraitRefs(s, model).find(patch.trait, ("body", "trait"))
        text = patch.text if patch.text is not None else row.text
        quality = float(patch.quality) if patch.quality is not None else row.quality
        if (trait.id, text, quality) == (row.trait_id, row.text, row.quality):
            return sample_out(row, trait.key)  # nothing changes: a repeat of an edit is harmless
        digest = sha256(text)
        annotator = who.annotator  # the editor now gives the label
        # As on create, two identical samples (trait, text, quality, annotator, adjudication) are never
        # stored: an edit that makes this one identical to a stored one removes it and answers with that one.
        same = s.scalar(
            select(SampleRow).where(
                SampleRow.model_id == model.id,
                SampleRow.trait_id == trait.id,
                content_key(SampleRow.content_sha256) == key_of(digest),  # the index
                SampleRow.content_sha256 == digest,
                SampleRow.quality == quality,
                SampleRow.annotator == annotator,
                SampleRow.adjudicated == row.adjudicated,
                SampleRow.id != row.id,
            )
        )
        count_samples(s, row.trait_id, [row.quality], removed=True)
        if same is not None:
            s.delete(row)
            model.updated_at = utcnow()
            return sample_out(same, trait.key)
        count_samples(s, trait.id, [quality])
        row.trait_id, row.text, row.quality, row.content_sha256 = trait.id, text, quality, digest
        row.annotator = annotator
        row.provenance = "authored"  # the caller now supplies it (discover/synthesize fingerprints see it)
        model.updated_at = utcnow()
        s.flush()
        return sample_out(row, trait.key)


def delete_sample(ctx: Databases, who: Principal, handle: str, sample_id: int) -> SampleDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require(s, model, "edit")
        count_samples(s, row.trait_id, [row.quality], removed=True)
        s.delete(row)
        model.updated_at = utcnow()
        return SampleDeleted(handle=model.handle, id=sample_id, deleted=True)
