"""Models: create, list, get, update, delete (archive), reopen."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from core.contract import DEFAULT_VOTES_WANTED, HANDLE_RE, PUBLIC_NAMESPACE, ModelState
from core.embedders.registry import choice_id
from core.json_types import JsonObject
from core.model_states import TRANSITIONS
from service.domain.access import load_model, require_role
from service.domain.agreement import keep_agreement
from service.domain.needs import Databases, Resources
from service.domain.retention import erase, purge_texts
from service.domain.states import busy_error, require, require_not_archived
from service.domain.views import model_out, models_out
from service.errors import ApiError
from service.schemas.common import Deleted
from service.schemas.models import ModelCreate, ModelOut, ModelPage, ModelPatch
from service.store import audit, history, ledger
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.schema import Model, SampleRow, Version, utcnow

#: A model's settings the audit log records as they were and became (`model_created`, `model_changed`).
AUDITED_SETTINGS = (
    "zero_data_retention",
    "votes_wanted",
    "auto_retrain",
    "blind_labelling",
    "overlap",
    "auto_prune",
    "review",
    "accept_rule",
    "shared_pool",
    "gold_rate",
    "gold_threshold",
)


def create_model(ctx: Resources, who: Principal, payload: ModelCreate) -> ModelOut:
    match = HANDLE_RE.match(payload.handle)
    assert match is not None
    namespace = match.group(1)
    if not who.owns(namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {namespace!r}.")
    require_role(who, "manage", namespace)
    try:
        with transaction(ctx.sessions) as s:
            if s.scalar(select(Model.id).where(Model.handle == payload.handle)) is not None:
                raise ApiError(
                    409, "handle_taken", f"The handle {payload.handle!r} is taken; handles are never reused."
                )
            now = utcnow()
            model = Model(
                handle=payload.handle,
                namespace=namespace,
                description=payload.description,
                scoring_method=payload.scoring_method,
                kind=payload.kind,
                state="draft",
                zero_data_retention=payload.zero_data_retention,
                max_depth=payload.max_depth,
                additional_terms=payload.additional_terms,
                upstream_sources=[u.model_dump(exclude_none=True) for u in payload.upstream_sources]
                if payload.upstream_sources is not None
                else None,
                readme_markdown=payload.readme_markdown,
                auto_prune=None,
                embedder=ctx.embedders.model_id(choice_id(payload.embedder) if payload.embedder else None),
                votes_wanted=payload.votes_wanted or DEFAULT_VOTES_WANTED,
                auto_retrain=payload.auto_retrain is not False,
                auto_retrain_set=payload.auto_retrain is not None,
                blind_labelling=payload.blind_labelling is True,
                overlap=payload.overlap or 0.0,
                review=payload.review,
                accept_rule=payload.accept_rule or "none",
                created_at=now,
                updated_at=now,
            )
            s.add(model)
            s.flush()
            settings = {name: getattr(model, name) for name in AUDITED_SETTINGS}
            audit.record(s, who, "model_created", namespace, model, {"settings": settings})
            return model_out(s, model)
    except IntegrityError:  # a concurrent create of the same handle
        raise ApiError(409, "handle_taken", f"The handle {payload.handle!r} is taken.") from None


def list_models(
    ctx: Resources,
    who: Principal,
    limit: int,
    cursor: str | None,
    namespace: str | None,
    state: ModelState | None,
    kind: str | None,
) -> ModelPage:
    ns = namespace or PUBLIC_NAMESPACE
    if not who.can_read(ns):
        raise ApiError(403, "forbidden", f"The key does not own namespace {ns!r}.")
    scope = f"models|{ns}|{state or ''}|{kind or ''}"
    after = ctx.cursors.position(cursor, scope) or 0  # ids start at 1
    with transaction(ctx.reads) as s:
        q = select(Model).where(Model.namespace == ns, Model.id > after)
        q = q.where(Model.state == state) if state else q.where(Model.state != "archived")
        if kind:
            q = q.where(Model.kind == kind)
        rows = s.scalars(q.order_by(Model.id).limit(limit + 1)).all()
        page = rows[:limit]
        items = models_out(s, page)
    next_cursor = ctx.cursors.encode(scope, page[-1].id) if len(rows) > limit else None
    return ModelPage(items=items, limit=limit, next_cursor=next_cursor)


def get_model(ctx: Databases, who: Principal, handle: str) -> ModelOut:
    with transaction(ctx.reads) as s:
        return model_out(s, load_model(s, who, handle))


def update_model(ctx: Resources, who: Principal, handle: str, payload: ModelPatch) -> ModelOut:
    fields: dict[str, object] = payload.model_dump(exclude_unset=True)
    purged: list[str] = []
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        before = {name: getattr(model, name) for name in AUDITED_SETTINGS}
        if fields.get("zero_data_retention") and not model.zero_data_retention and model.state == "busy":
            # The purge would race the run in flight: it may already hold the samples, or fail for lack
            # of them. Turn it on once the run is done (a training run then purges at completion anyway).
            raise busy_error(s, model)
        for name in ("description", "readme_markdown", "additional_terms"):
            if name in fields:
                value = fields[name]
                setattr(model, name, "" if value is None and name == "description" else value)
        if "upstream_sources" in fields:
            model.upstream_sources = (
                [u.model_dump(exclude_none=True) for u in payload.upstream_sources]
                if payload.upstream_sources is not None
                else None
            )
        if "auto_prune" in fields:
            model.auto_prune = (
                payload.auto_prune.model_dump(exclude_none=True) or None
                if payload.auto_prune is not None
                else None
            )
        # null leaves them as they are (they have no "cleared" value); resuming starts no run by itself: the
        # next label finds the full buffer and retrains (service/domain/scoring.py, retrain_if_full).
        if fields.get("votes_wanted") is not None:
            model.votes_wanted = int(fields["votes_wanted"])  # type: ignore[call-overload]
        if fields.get("auto_retrain") is not None:
            model.auto_retrain = bool(fields["auto_retrain"])
            model.auto_retrain_set = True
        if fields.get("blind_labelling") is not None:
            model.blind_labelling = bool(fields["blind_labelling"])
        if payload.overlap is not None:
            model.overlap = payload.overlap
        if payload.review is not None:
            model.review = payload.review
        if payload.accept_rule is not None:
            model.accept_rule = payload.accept_rule
        if payload.shared_pool is not None:
            model.shared_pool = payload.shared_pool
        if payload.gold_rate is not None:
            model.gold_rate = payload.gold_rate
        if payload.gold_threshold is not None:
            model.gold_threshold = payload.gold_threshold
        if fields.get("zero_data_retention") is not None:
            turning_on = fields["zero_data_retention"] and not model.zero_data_retention
            model.zero_data_retention = bool(fields["zero_data_retention"])
            if turning_on:  # purge now; turning it off later does not bring anything back
                keep_agreement(s, model)
                purged = purge_texts(s, model.id)
        model.updated_at = utcnow()
        s.flush()
        after = {name: getattr(model, name) for name in AUDITED_SETTINGS}
        changes: JsonObject = {
            n: {"from": before[n], "to": after[n]} for n in AUDITED_SETTINGS if before[n] != after[n]
        }
        # Texts (description, readme, terms, sources) are named, never copied: the log keeps no text.
        texts = sorted(set(fields) - set(AUDITED_SETTINGS))
        audit.record(s, who, "model_changed", model.namespace, model, {"settings": changes, "texts": texts})
        out = model_out(s, model)
    erase(ctx.engine, ctx.embedders, purged)  # after the commit: the bytes, in the files
    return out


def delete_model(ctx: Databases, who: Principal, handle: str) -> Deleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        if model.state == "busy":  # a run's result would land nowhere; cancel it first (docs/api.md)
            raise busy_error(s, model, cancel_first=True)
        require(s, model, "delete")
        if model.state == "archived":
            return Deleted(handle=model.handle, deleted=False)
        audit.record(s, who, "model_deleted", model.namespace, model, {"state": model.state})
        model.state = TRANSITIONS["delete"][model.state]
        model.updated_at = utcnow()
        return Deleted(handle=model.handle, deleted=True)


def purge_model(ctx: Resources, who: Principal, handle: str) -> Deleted:
    """docs/api.md "Purge": the model and everything stored under it deleted, its handle free again."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        if model.state == "busy":  # a run's result would land nowhere; cancel it first (docs/api.md)
            raise busy_error(s, model, cancel_first=True)
        require(s, model, "delete")
        model_id = model.id
        # Before the delete, in its transaction: the log outlives the model (its rows keep no foreign key).
        audit.record(s, who, "model_purged", model.namespace, model, {"state": model.state})
        versions = list(s.scalars(select(Version.id).where(Version.model_id == model_id)))
        s.expunge(model)
        s.execute(delete(Model).where(Model.id == model_id))  # the rest goes with it (ON DELETE CASCADE)
    # SQLite may hand a deleted row's id to the next row: no scorer or pool of the purged model may answer it.
    ctx.scorers.forget(versions)
    ctx.pools.forget(model_id)
    return Deleted(handle=handle, deleted=True)


def reopen_model(ctx: Databases, who: Principal, handle: str) -> ModelOut:
    """docs/api.md "Reopen": back to `draft` for editing while the active version keeps serving."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require(s, model, "reopen")
        if model.state == "draft":  # already editable: a repeat (or a lost response) changes nothing
            return model_out(s, model)
        message = "Reopened for editing"
        if model.current_version_id is not None:
            serving = history.version_no_of(s, model.current_version_id)
            message = (
                f"Reopened for editing; v{serving} keeps serving until a training makes the next version"
            )
            history.record(s, model, "reopened", serving or 0)
            empty = s.scalar(select(SampleRow.id).where(SampleRow.model_id == model.id).limit(1)) is None
            if model.zero_data_retention and empty:
                message += "; zero-data-retention deleted the samples at training, so the draft starts empty"
        audit.record(s, who, "model_reopened", model.namespace, model, {"state": model.state})
        ledger.record_done(s, model, "reopen", message)
        model.state = TRANSITIONS["reopen"][model.state]
        model.updated_at = utcnow()
        s.flush()
        return model_out(s, model)
