"""The samples resource: add, list, edit, delete (edits only on an untrained model). The samples as the engine
sees them (read, add without duplicates) are service/store/samples.py's."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import Action, AuditKind, Provenance
from core.engine.types import Sample
from core.json_types import JsonObject
from service.domain.access import load_model, require_role
from service.domain.blind import blind_for, seen
from service.domain.claims import require_unclaimed
from service.domain.gold_labels import answer_labels, as_sample, readable_answers
from service.domain.gold_secret import answerer, sample_visible
from service.domain.needs import Databases, Resources
from service.domain.review import review_changed_label
from service.domain.states import require, require_not_archived
from service.domain.traits import TraitRefs
from service.domain.views import sample_out
from service.errors import ApiError
from service.schemas.samples import (
    SampleDeleted,
    SampleIds,
    SampleIn,
    SampleOut,
    SamplePage,
    SamplePatch,
    Settled,
    SettleIn,
)
from service.store import audit, quotas
from service.store.api_keys import Principal, reserved_annotators
from service.store.db import transaction
from service.store.heldout import evaluation_digests
from service.store.review import accept_by_agreement
from service.store.samples import add_samples, count_samples, label_point, scale_points, sha256
from service.store.schema import MAX_INT, Model, SampleRow, Trait, content_key, key_of, utcnow
from service.store.teams import label_status


def label_authors(s: Session, who: Principal, given: Sequence[str | None], where: str) -> list[str]:
    """Each label's annotator: the one given, else the calling key's annotator name. 422
    `annotator_reserved` when one is another key's (`where`: the list's name in the body)."""
    names = [name or who.annotator for name in given]
    require_own_votes(s, who, names, where)
    return names


def require_own_votes(s: Session, who: Principal, names: Sequence[str | None], where: str) -> None:
    """422 `annotator_reserved` when a label names another key's annotator: no one posts a colleague's
    votes (None: an unattributed label, nobody's vote)."""
    taken = set(reserved_annotators(s, who, {n for n in names if n is not None}))
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


# -- the samples resource: add, list, edit, delete (edits only on an untrained model) -----------------------


def samples_action(who: Principal, items: Sequence[SampleIn]) -> Action:
    """What a request of samples is (docs/api.md "Roles"): rows of a file import or of another rater (an
    `imported` provenance, an annotator that is not the caller) are an import, `manage`; a settling vote
    (`adjudicated`) is `review`; the caller's own votes are `label`. The most any row needs decides."""
    if any(x.provenance == "imported" or x.annotator not in (None, who.annotator) for x in items):
        return "manage"
    return "review" if any(x.adjudicated for x in items) else "label"


def edit_action(who: Principal, row: SampleRow) -> Action:
    """What changing or deleting a stored sample is: one's own vote is one's own to take back (the Label
    page's undo), a settling vote its reviewer's; anyone else's sample is the owner's to change."""
    if row.annotator != who.annotator:
        return "manage"
    return "review" if row.adjudicated else "label"


def _settled(
    s: Session, model: Model, trait_id: int, digest: str, but: int | None = None
) -> SampleRow | None:
    """The vote that settled this text of the trait, if one has (`but`: a sample to leave out)."""
    query = select(SampleRow).where(
        SampleRow.model_id == model.id,
        SampleRow.trait_id == trait_id,
        content_key(SampleRow.content_sha256) == key_of(digest),  # the index
        SampleRow.content_sha256 == digest,
        SampleRow.adjudicated.is_(True),
    )
    if but is not None:
        query = query.where(SampleRow.id != but)
    return s.scalars(query.order_by(SampleRow.id).limit(1)).first()


def already_settled(first: SampleRow, trait: str, loc: list[str | int]) -> ApiError:
    """409: a text is settled once; the message says by whom and when, so the second reviewer can talk to
    the first instead of overruling them."""
    by = first.annotator or "an unattributed vote"
    return ApiError(
        409,
        "already_settled",
        f"This text of trait {trait!r} was settled already, by {by} at {first.created_at:%Y-%m-%d %H:%M} UTC "
        f"(sample {first.id}): a text is settled once. To settle it anew, its settler or an owner deletes "
        "that vote first.",
        details=[{"loc": loc, "msg": f"settled by {by}", "type": "already_settled"}],
    )


def add_sample_batch(ctx: Resources, who: Principal, handle: str, items: list[SampleIn]) -> SampleIds:
    """All or none; a sample already stored (same trait, text, quality) answers with its id."""
    with transaction(ctx.sessions) as s:
        action = samples_action(who, items)
        model = load_model(s, who, handle, write=True, action=action)
        require(s, model, "edit")
        refs = TraitRefs(s, model)
        resolved = [
            Sample(refs.find(x.trait, ("body", "samples", i, "trait")).key, x.text, x.quality)
            for i, x in enumerate(items)
        ]
        # A file's rows are not the importer's votes: the file's rater, else nobody's (unattributed).
        annotators = [
            x.annotator if x.provenance == "imported" else x.annotator or who.annotator for x in items
        ]
        require_own_votes(s, who, annotators, "samples")
        own = [
            x
            for x, a, i in zip(resolved, annotators, items, strict=True)
            if a == who.annotator and not i.adjudicated
        ]
        require_unclaimed(s, model, refs, who.annotator, own)
        settles = _check_settles(s, model, refs.ids, resolved, annotators, items)
        quotas.require_namespace_room(
            s, ctx.settings, model.namespace, quotas.chars_of(x.text for x in items)
        )
        duplicates: list[int] = []
        status = label_status(s, who, model)
        ids = add_samples(
            s,
            model.id,
            refs.ids,
            resolved,
            "authored",
            provenances=[x.provenance for x in items],
            annotators=annotators,
            adjudicated=[x.adjudicated for x in items],
            source_urls=[x.source_url for x in items],
            source_ids=[x.source_id for x in items],
            metadata=[x.metadata for x in items],
            duplicates=duplicates,
            review=status,
        )
        quotas.require_person_room(s, ctx.settings, who, model)
        if status == "pending":
            for x in resolved:
                accept_by_agreement(s, model, refs.find(x.trait, ("body", "samples")), x.text)
        for i in settles:
            detail = {"trait": resolved[i].trait, "sample_id": ids[i], "quality": resolved[i].quality}
            audit.record(s, who, "settled", model.namespace, model, {**detail, "annotator": annotators[i]})
        if action == "manage":  # an import (rows of other raters, or a file's): an owner's, so recorded
            raters = sorted({a for a in annotators if a is not None})
            imported: JsonObject = {"rows": len(items), "duplicates": len(duplicates), "raters": len(raters)}
            audit.record(s, who, "samples_imported", model.namespace, model, imported)
        # Stored all the same (a sample is the caller's to give), but such a text is no longer held out.
        digests = [sha256(x.text) for x in resolved]
        held = evaluation_digests(s, model.id, digests)
        model.updated_at = utcnow()
        ctx.checkpoints.reached("samples_committing", model.handle, f"samples commit ({len(ids)} rows)")
        return SampleIds(ids=ids, in_evaluation_set=sum(d in held for d in digests), duplicates=duplicates)


def _check_settles(
    s: Session,
    model: Model,
    trait_ids: dict[str, int],
    resolved: list[Sample],
    annotators: list[str | None],
    items: list[SampleIn],
) -> list[int]:
    """The rows of the request that settle a text anew (to record); 409 `already_settled` for one whose text
    a vote of another (or of another quality) settled. The very same vote again is the harmless repeat every
    duplicate is (its stored id answers, nothing recorded)."""
    new: list[int] = []
    settling: dict[tuple[int, str], tuple[str | None, float]] = {}
    for i, (x, who) in enumerate(zip(resolved, annotators, strict=True)):
        if not items[i].adjudicated:
            continue
        text, vote = (trait_ids[x.trait], sha256(x.text)), (who, float(x.quality))
        loc: list[str | int] = ["body", "samples", i, "adjudicated"]
        first = _settled(s, model, *text)
        if first is not None:
            if (first.annotator, first.quality) != vote:
                raise already_settled(first, x.trait, loc)
            continue  # the stored settle again
        if text not in settling:
            settling[text] = vote
            new.append(i)
        elif settling[text] != vote:  # two settles of one text in one request
            raise ApiError(
                409,
                "already_settled",
                f"Two rows of the request settle one text of trait {x.trait!r} differently: a text is "
                "settled once.",
                details=[{"loc": loc, "msg": "settled twice", "type": "already_settled"}],
            )
    return new


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
        if (me := blind_for(who, model)) is not None:
            q = q.where(seen(me, model, SampleRow.trait_id, SampleRow.content_sha256, SampleRow.annotator))
        if (answers := answerer(who, model)) is not None:  # no settled or gold answer to one who answers gold
            q = q.where(sample_visible(answers, model))
        rows = s.execute(q.order_by(SampleRow.id).limit(limit + 1)).all()
        items = [sample_out(row, key) for row, key in rows]
        if answers is not None and provenance in (
            None,
            "authored",
        ):  # an answer reads as a label (gold_labels)
            scales = dict(
                s.execute(select(Trait.id, Trait.scale).where(Trait.model_id == model.id)).tuples().all()
            )
            traits = named if trait is not None else list(scales)
            items += [
                as_sample(a, scale_points(scales.get(a.trait_id)))
                for a in readable_answers(answer_labels(s, model), answers, me is not None)
                if a.kind == "sample" and a.id > after and a.trait_id in traits
            ]
            items.sort(key=lambda x: x.id)
    next_cursor = ctx.cursors.encode(scope, items[limit - 1].id) if len(items) > limit else None
    return SamplePage(items=items[:limit], limit=limit, next_cursor=next_cursor)


def _find_sample(s: Session, model: Model, sample_id: int) -> SampleRow:
    """The model's sample, or 404 (also for an id of another model: ids do not reveal other models)."""
    row = None
    if 1 <= sample_id <= MAX_INT:
        row = s.scalar(select(SampleRow).where(SampleRow.id == sample_id, SampleRow.model_id == model.id))
    if row is None:
        raise ApiError(404, "sample_not_found", f"No sample {sample_id} in {model.handle}.")
    return row


def update_sample(
    ctx: Resources, who: Principal, handle: str, sample_id: int, patch: SamplePatch
) -> SampleOut:
    """Change a stored sample's trait, text or quality. Held to the quotas by what it adds, and to the review
    rule (`review_changed_label`): an annotator's change of a reviewed model's label waits for a reviewer."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")  # the least an edit needs
        row = _find_sample(s, model, sample_id)
        require_role(who, edit_action(who, row), model.namespace)
        require(s, model, "edit")
        trait = s.get(Trait, row.trait_id)
        assert trait is not None
        before = {"trait": trait.key, "quality": row.quality}
        if patch.trait is not None:
            trait = TraitRefs(s, model).find(patch.trait, ("body", "trait"))
        text = patch.text if patch.text is not None else row.text
        quality = float(patch.quality) if patch.quality is not None else row.quality
        if (trait.id, text, quality) == (row.trait_id, row.text, row.quality):
            return sample_out(row, trait.key)  # nothing changes: a repeat of an edit is harmless
        digest = sha256(text)
        # A vote stays its annotator's: an owner correcting bob's vote leaves it bob's, and the log says who
        # changed what (no text: the digest tells whether the text changed). A machine-made sample
        # (synthesized, discovered) is nobody's vote: the editor's judgement makes it theirs.
        machine = row.provenance in ("synthesized", "discovered")
        annotator = who.annotator if machine else row.annotator
        edited: JsonObject = {
            "sample_id": row.id,
            "annotator": annotator,
            "before": before,
            "after": {"trait": trait.key, "quality": quality},
            "text_changed": digest != row.content_sha256,
        }
        audit.record(s, who, "vote_edited", model.namespace, model, edited)
        if row.adjudicated:  # still a settling vote: of a text no other vote settled, and recorded
            first = _settled(s, model, trait.id, digest, but=row.id)
            if first is not None and (first.annotator, first.quality) != (annotator, quality):
                raise already_settled(first, trait.key, ["body", "text"])
            detail = {"trait": trait.key, "sample_id": row.id, "quality": quality, "edited": True}
            audit.record(s, who, "settled", model.namespace, model, {**detail, "annotator": annotator})
        # As on create, two identical samples (trait, text, quality, annotator, adjudication) are never
        # stored: an edit that makes this one identical to a stored one removes it and answers with that one.
        same = s.scalar(
            select(SampleRow).where(
                SampleRow.model_id == model.id,
                SampleRow.trait_id == trait.id,
                content_key(SampleRow.content_sha256) == key_of(digest),  # the index
                SampleRow.content_sha256 == digest,
                SampleRow.quality == quality,
                SampleRow.annotator.is_(None) if annotator is None else SampleRow.annotator == annotator,
                SampleRow.adjudicated == row.adjudicated,
                SampleRow.id != row.id,
            )
        )
        if same is not None:  # the edit removes a row and stores nothing new: no quota, no review
            count_samples(s, row.trait_id, [row.quality], removed=True)
            s.delete(row)
            model.updated_at = utcnow()
            return sample_out(same, trait.key)
        kept_by = row.annotator  # the row's; `annotator` above names the vote in the log and the twin search
        quotas.require_edit_room(s, ctx.settings, who, model, (kept_by, row.text), (kept_by, text))
        count_samples(s, row.trait_id, [row.quality], removed=True)
        count_samples(s, trait.id, [quality])
        row.trait_id, row.text, row.quality, row.content_sha256 = trait.id, text, quality, digest
        row.point = label_point(quality, scale_points(trait.scale))
        if annotator == who.annotator:  # one's own vote, now as one gives it (discover/synthesize see it)
            row.provenance = "authored"
        review_changed_label(s, who, model, row, trait)
        model.updated_at = utcnow()
        s.flush()
        return sample_out(row, trait.key)


def delete_sample(ctx: Databases, who: Principal, handle: str, sample_id: int) -> SampleDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")  # the least a deletion needs
        row = _find_sample(s, model, sample_id)
        require_role(who, edit_action(who, row), model.namespace)
        require(s, model, "edit")
        trait = s.get(Trait, row.trait_id)
        detail = {"trait": trait.key if trait else None, "sample_id": row.id, "quality": row.quality}
        # A settling vote's delete unsettles the text (someone may settle it anew); any other is a vote gone.
        kind: AuditKind = "unsettled" if row.adjudicated else "vote_deleted"
        audit.record(s, who, kind, model.namespace, model, {**detail, "annotator": row.annotator})
        count_samples(s, row.trait_id, [row.quality], removed=True)
        s.delete(row)
        model.updated_at = utcnow()
        return SampleDeleted(handle=model.handle, id=sample_id, deleted=True)


def settle_text(ctx: Resources, who: Principal, handle: str, payload: SettleIn) -> Settled:
    """A reviewer settles a text in any state but archived: unlike the samples route (the spec's, drafts
    only) a settling vote is no edit of the version serving, and the next training takes it in, with no
    reopen. A text is settled once (409 `already_settled`, saying by whom); the very same vote again answers
    with the stored one."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="review")
        require_not_archived(model)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        first = _settled(s, model, trait.id, sha256(payload.text))
        if first is not None and (first.annotator, first.quality) != (who.annotator, float(payload.quality)):
            raise already_settled(first, trait.key, ["body", "quality"])
        quotas.require_namespace_room(s, ctx.settings, model.namespace, len(payload.text))
        sample = Sample(trait.key, payload.text, payload.quality)
        sid = add_samples(
            s,
            model.id,
            {trait.key: trait.id},
            [sample],
            "authored",
            annotators=[who.annotator],
            adjudicated=[True],
        )[0]
        quotas.require_person_room(s, ctx.settings, who, model)  # a reviewer's votes count as anyone's
        if first is None:
            detail = {"trait": trait.key, "sample_id": sid, "quality": payload.quality}
            audit.record(s, who, "settled", model.namespace, model, {**detail, "annotator": who.annotator})
        model.updated_at = utcnow()
        return Settled(handle=model.handle, id=sid, trait=trait.key, settled_by=who.annotator)
