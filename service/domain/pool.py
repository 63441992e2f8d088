"""A model's unlabelled pool: import texts, list (keyset pages), delete, and suggest what to label next."""

from __future__ import annotations

import logging
from collections.abc import Collection

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.needs import Databases, Resources
from service.domain.pool_index import embedding_step
from service.domain.states import require_not_archived
from service.errors import ApiError
from service.schemas.common import metadata_filter_problem
from service.schemas.pool import (
    PoolAdded,
    PoolDeleted,
    PoolIn,
    PoolPage,
    PoolTextOut,
)
from service.schemas.samples import SampleDeleted
from service.store import audit, quotas
from service.store.api_keys import Principal
from service.store.assignments import PoolFilter
from service.store.db import rows_changed, transaction
from service.store.heldout import (
    evaluation_digests,
    evaluation_pool_ids,
    outside_evaluation_set,
    sample_digests,
)
from service.store.samples import sha256
from service.store.schema import MAX_INT, Model, PoolText, utcnow

log = logging.getLogger("service.domain")


def _writable(s: Session, who: Principal, handle: str) -> Model:
    model = load_model(s, who, handle, write=True)
    require_not_archived(model)
    return model


def add_pool_texts(ctx: Resources, who: Principal, handle: str, payload: PoolIn) -> PoolAdded:
    """Store the texts and answer; the worker embeds the new ones afterwards (domain/pool_index.py)."""
    digests = [sha256(t) for t in payload.texts]
    with transaction(ctx.sessions) as s:
        model, stored, new, held = _plan_pool_import(s, who, handle, payload.texts, digests)
        if payload.metadata is not None and len(payload.metadata) != len(
            payload.texts
        ):  # after the model's 404
            raise ApiError(
                422,
                "invalid_metadata",
                f"metadata has {len(payload.metadata)} entries for {len(payload.texts)} texts: one per text.",
                details=[{"loc": ["body", "metadata"], "msg": "one per text", "type": "invalid_metadata"}],
            )
        duplicates = _repeats(digests, set(stored), held)
        quotas.require_namespace_room(s, ctx.settings, model.namespace, quotas.chars_of(new.values()))
        given = dict(zip(digests, payload.metadata or [], strict=False))
        if new:
            # executemany, then the new ids through the (model, hash) index: an ORM flush of many rows inserts
            # them one statement each on SQLite.
            now = utcnow()
            rows = [
                {
                    "model_id": model.id,
                    "text": t,
                    "content_sha256": d,
                    "created_at": now,
                    "meta": given.get(d),
                }
                for d, t in new.items()
            ]
            s.execute(insert(PoolText), rows)
            stored.update(_pool_ids(s, model.id, list(new)))
        added: JsonObject = {"texts": len(payload.texts), "added": len(new)}
        audit.record(s, who, "pool_added", model.namespace, model, added)
        answer = PoolAdded(
            ids=[stored[d] for d in digests if d not in held],
            added=len(new),
            in_evaluation_set=sum(d in held for d in digests),
            duplicates=duplicates,
            labelled=len(sample_digests(s, model.id, new)),
        )
    if new:
        fresh = [stored[d] for d in new]
        _embed_later(ctx, embedding_step(model.id, min(fresh), max(fresh)))
    return answer


def _embed_later(ctx: Resources, step: str) -> None:
    """Queue the new texts' embedding for the worker, after the commit (the worker reads them). The texts
    are stored whatever the queue does: a suggestion embeds what the worker has not."""
    try:
        ctx.enqueue(step)
    except Exception:  # the queue's backend is down: slower suggestions, not a failed import
        log.exception("could not queue %s", step)


def _repeats(digests: list[str], before: set[str], held: set[str]) -> list[int]:
    """The positions of texts that add nothing: in the pool before, or earlier in the request (a text of the
    evaluation set is left out, not a repeat)."""
    seen = set(before)
    out: list[int] = []
    for i, digest in enumerate(digests):
        if digest in held:
            continue
        if digest in seen:
            out.append(i)
        seen.add(digest)
    return out


def _pool_ids(s: Session, model_id: int, digests: Collection[str]) -> dict[str, int]:
    """{content hash: id} of the model's pool texts among `digests` (one indexed query)."""
    return dict(
        s.execute(
            select(PoolText.content_sha256, PoolText.id).where(
                PoolText.model_id == model_id, PoolText.content_sha256.in_(set(digests))
            )
        )
        .tuples()
        .all()
    )


def _plan_pool_import(
    s: Session, who: Principal, handle: str, texts: list[str], digests: list[str]
) -> tuple[Model, dict[str, int], dict[str, str], set[str]]:
    """The model, the ids of its pool's texts among these, {hash: text} of the others to add, and the hashes
    left out as texts of the evaluation set (after the owner and ZDR checks)."""
    model = _writable(s, who, handle)
    if model.zero_data_retention:
        raise ApiError(
            409,
            "zero_data_retention",
            "The model has zero-data-retention on: the service keeps no unlabelled texts for it.",
        )
    stored = _pool_ids(s, model.id, digests)
    # A pool text is there to be labelled, then trained on: evaluation texts stay out (store/heldout.py).
    held = evaluation_digests(s, model.id, digests)
    new: dict[str, str] = {}
    for text, digest in zip(texts, digests, strict=True):
        if digest not in stored and digest not in held:
            new.setdefault(digest, text)
    return model, stored, new, held


def metadata_filters(given: list[str], where: str = "meta") -> tuple[tuple[str, str], ...]:
    """`key:value` filters as (key, value) pairs (the first colon splits them); 422 `invalid_metadata_filter`
    for one without a key or filters beyond their bounds (schemas/common.py, as an assignment's)."""
    out: list[tuple[str, str]] = []
    for i, item in enumerate(given):
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise ApiError(
                422,
                "invalid_metadata_filter",
                f"{where}={item!r}: a metadata filter is `key:value` (the first colon splits them).",
                details=[
                    {"loc": ["query", where, i], "msg": "not key:value", "type": "invalid_metadata_filter"}
                ],
            )
        out.append((key, value))
    if problem := metadata_filter_problem(out):
        raise ApiError(422, "invalid_metadata_filter", f"{where}: {problem}.")
    return tuple(out)


def list_pool(
    ctx: Resources,
    who: Principal,
    handle: str,
    limit: int,
    cursor: str | None,
    *,
    q: str | None = None,
    meta: list[str] | None = None,
) -> PoolPage:
    """A page of the pool's texts matching the search and the metadata filters (store/assignments.PoolFilter),
    oldest first; `total` counts those matching. Texts of the evaluation set (imported before the set had
    them) are left out: they are not to be labelled."""
    where = PoolFilter(q=q, meta=metadata_filters(meta or []))
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        scope = f"pool|{model.id}|{where.key()}"
        after = ctx.cursors.position(cursor, scope) or 0  # ids start at 1
        matching = (
            PoolText.model_id == model.id,
            outside_evaluation_set(model.id, PoolText.content_sha256),
            *where.conditions(),
        )
        rows = s.scalars(
            select(PoolText).where(*matching, PoolText.id > after).order_by(PoolText.id).limit(limit + 1)
        ).all()
        page = rows[:limit]
        total = s.scalar(select(func.count()).select_from(PoolText).where(*matching)) or 0
        held = len(evaluation_pool_ids(s, model.id))
        items = [PoolTextOut(id=r.id, text=r.text, created_at=r.created_at, metadata=r.meta) for r in page]
    next_cursor = ctx.cursors.encode(scope, page[-1].id) if len(rows) > limit else None
    return PoolPage(items=items, limit=limit, next_cursor=next_cursor, total=total, in_evaluation_set=held)


def delete_pool_text(ctx: Databases, who: Principal, handle: str, text_id: int) -> SampleDeleted:
    with transaction(ctx.sessions) as s:
        model = _writable(s, who, handle)
        row = None
        if 1 <= text_id <= MAX_INT:
            row = s.scalar(select(PoolText).where(PoolText.id == text_id, PoolText.model_id == model.id))
        if row is None:
            raise ApiError(404, "pool_text_not_found", f"No pool text {text_id} in {model.handle}.")
        s.delete(row)
        audit.record(s, who, "pool_deleted", model.namespace, model, {"pool_text_id": text_id})
        return SampleDeleted(handle=model.handle, id=text_id, deleted=True)


def clear_pool(ctx: Resources, who: Principal, handle: str) -> PoolDeleted:
    with transaction(ctx.sessions) as s:
        model = _writable(s, who, handle)
        gone = rows_changed(s, delete(PoolText).where(PoolText.model_id == model.id))
        if gone:
            audit.record(s, who, "pool_deleted", model.namespace, model, {"deleted": gone})
    ctx.pools.forget(model.id)
    return PoolDeleted(handle=model.handle, deleted=gone)
