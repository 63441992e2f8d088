"""Samples: add (all or none, duplicates harmless), list (keyset pages), edit and delete (untrained model)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import SAMPLES_PAGE, Provenance
from core.engine.types import Sample
from service.auth import AuthoringKey, CtxDep, load_model
from service.db import transaction
from service.domain.samples import add_samples, sha256
from service.errors import ApiError
from service.routes.common import errors
from service.schemas import (
    SampleDeleted,
    SampleIds,
    SampleOut,
    SamplePage,
    SamplePatch,
    SamplesIn,
)
from service.states import require_untrained
from service.tables import Model, SampleRow, Trait, utcnow
from service.testhooks import pause
from service.views import sample_out

router = APIRouter(tags=["samples"])
MAX_ID = 2**31 - 1


@router.post(
    "/models/{handle}/samples",
    status_code=status.HTTP_201_CREATED,
    response_model=SampleIds,
    responses=errors(403, 404, 409),
)
def add_sample_batch(handle: str, body: SamplesIn, who: AuthoringKey, ctx: CtxDep) -> SampleIds:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_untrained(s, model)
        traits = s.scalars(select(Trait).where(Trait.model_id == model.id)).all()
        by_key = {t.key: t for t in traits}
        by_name = {t.name: t for t in traits}
        resolved: list[Sample] = []
        for i, item in enumerate(body.samples):
            trait = by_key.get(item.trait) or by_name.get(item.trait)
            if trait is None:
                raise ApiError(
                    422,
                    "unknown_trait",
                    f"samples[{i}]: no trait {item.trait!r} in {model.handle}.",
                    details=[
                        {
                            "loc": ["body", "samples", i, "trait"],
                            "msg": "unknown trait",
                            "type": "unknown_trait",
                        }
                    ],
                )
            resolved.append(Sample(trait=trait.key, text=item.text, quality=item.quality))
        ids = add_samples(s, model.id, {t.key: t.id for t in traits}, resolved, "authored")
        # source_url is per input item; set it on rows created by this request.
        for item, sid in zip(body.samples, ids, strict=True):
            if item.source_url is not None:
                row = s.get(SampleRow, sid)
                if row is not None and row.source_url is None:
                    row.source_url = item.source_url
        model.updated_at = utcnow()
        pause(ctx.settings.test_hooks.slow_samples_commit, model.handle, f"samples commit ({len(ids)} rows)")
        return SampleIds(ids=ids)


@router.get("/models/{handle}/samples", response_model=SamplePage, responses=errors(400, 403, 404))
def list_samples(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: Annotated[str | None, Query(max_length=100)] = None,
    provenance: Annotated[Provenance | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=SAMPLES_PAGE.maximum)] = SAMPLES_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
) -> SamplePage:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"samples|{model.id}|{trait or ''}|{provenance or ''}"
        after = ctx.cursors.decode(cursor, scope) if cursor else 0
        if not isinstance(after, int):
            raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.")
        q = (
            select(SampleRow, Trait.key)
            .join(Trait, Trait.id == SampleRow.trait_id)
            .where(SampleRow.model_id == model.id, SampleRow.id > after)
        )
        if trait is not None:
            q = q.where((Trait.key == trait) | (Trait.name == trait))
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
    if 1 <= sample_id <= MAX_ID:  # beyond a 32-bit id no sample exists (and PostgreSQL would refuse it)
        row = s.scalar(select(SampleRow).where(SampleRow.id == sample_id, SampleRow.model_id == model.id))
    if row is None:
        raise ApiError(404, "sample_not_found", f"No sample {sample_id} in {model.handle}.")
    return row


@router.patch(
    "/models/{handle}/samples/{sample_id:int}", response_model=SampleOut, responses=errors(403, 404, 409)
)
def update_sample(
    handle: str, sample_id: int, body: SamplePatch, who: AuthoringKey, ctx: CtxDep
) -> SampleOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require_untrained(s, model)
        trait = s.get(Trait, row.trait_id)
        assert trait is not None
        if body.trait is not None:
            found = s.scalar(
                select(Trait).where(
                    Trait.model_id == model.id, (Trait.key == body.trait) | (Trait.name == body.trait)
                )
            )
            if found is None:
                raise ApiError(
                    422,
                    "unknown_trait",
                    f"No trait {body.trait!r} in {model.handle}.",
                    details=[{"loc": ["body", "trait"], "msg": "unknown trait", "type": "unknown_trait"}],
                )
            trait = found
        text = body.text if body.text is not None else row.text
        quality = float(body.quality) if body.quality is not None else row.quality
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
        if same is not None:
            s.delete(row)
            model.updated_at = utcnow()
            return sample_out(same, trait.key)
        row.trait_id, row.text, row.quality, row.content_sha256 = trait.id, text, quality, digest
        row.provenance = "authored"  # the caller now supplies it (discover/synthesize fingerprints see it)
        model.updated_at = utcnow()
        s.flush()
        return sample_out(row, trait.key)


@router.delete(
    "/models/{handle}/samples/{sample_id:int}", response_model=SampleDeleted, responses=errors(403, 404, 409)
)
def delete_sample(handle: str, sample_id: int, who: AuthoringKey, ctx: CtxDep) -> SampleDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        row = _find_sample(s, model, sample_id)
        require_untrained(s, model)
        s.delete(row)
        model.updated_at = utcnow()
        return SampleDeleted(handle=model.handle, id=sample_id, deleted=True)
