"""Traits: list, add, update, delete (edits only on an untrained model)."""

from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from core.contract import MAX_TRAITS, trait_key, unique_trait_key
from service.auth import AnyKey, AuthoringKey, CtxDep, load_model
from service.db import transaction
from service.errors import ApiError
from service.routes.common import errors
from service.schemas import Deleted, TraitPatch, TraitsIn, TraitsOut
from service.states import require_untrained
from service.tables import FeedbackLabel, Model, Trait, utcnow
from service.views import traits_out

router = APIRouter(tags=["traits"])


def find_trait(session: Session, model: Model, key: str) -> Trait:
    trait = session.scalar(select(Trait).where(Trait.model_id == model.id, Trait.key == key))
    if trait is None:
        raise ApiError(404, "trait_not_found", f"No trait {key!r} in {model.handle}.")
    return trait


@router.get("/models/{handle}/traits", response_model=TraitsOut, responses=errors(404))
def list_traits(handle: str, who: AnyKey, ctx: CtxDep) -> TraitsOut:
    with transaction(ctx.reads) as s:
        return TraitsOut(traits=traits_out(s, load_model(s, who, handle)))


@router.post(
    "/models/{handle}/traits",
    status_code=status.HTTP_201_CREATED,
    response_model=TraitsOut,
    responses=errors(403, 404, 409),
)
def add_traits(handle: str, body: TraitsIn, who: AuthoringKey, ctx: CtxDep) -> TraitsOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_untrained(s, model)
        taken = set(s.scalars(select(Trait.key).where(Trait.model_id == model.id)))
        count = s.scalar(select(func.count()).select_from(Trait).where(Trait.model_id == model.id)) or 0
        if count + len(body.traits) > MAX_TRAITS:
            raise ApiError(422, "validation_error", f"A model has at most {MAX_TRAITS} traits.")
        for t in body.traits:
            key = unique_trait_key(trait_key(t.name), taken)
            taken.add(key)
            s.add(
                Trait(
                    model_id=model.id,
                    key=key,
                    name=t.name,
                    positive_label=t.positive_label,
                    negative_label=t.negative_label,
                    description=t.description,
                    aggregation=t.aggregation,
                    kind="extrinsic",
                )
            )
        model.updated_at = utcnow()
        s.flush()
        return TraitsOut(traits=traits_out(s, model))


@router.patch("/models/{handle}/traits/{key}", response_model=TraitsOut, responses=errors(403, 404, 409))
def update_trait(handle: str, key: str, body: TraitPatch, who: AuthoringKey, ctx: CtxDep) -> TraitsOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        trait = find_trait(s, model, key)
        require_untrained(s, model)
        for name, value in body.model_dump(exclude_unset=True).items():
            if value is not None:  # null leaves the field unchanged; the key never changes
                setattr(trait, name, value)
        model.updated_at = utcnow()
        s.flush()
        return TraitsOut(traits=traits_out(s, model))


@router.delete("/models/{handle}/traits/{key}", response_model=Deleted, responses=errors(403, 404, 409))
def delete_trait(handle: str, key: str, who: AuthoringKey, ctx: CtxDep) -> Deleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        trait = find_trait(s, model, key)
        require_untrained(s, model)
        s.delete(trait)  # its samples go with it (ON DELETE CASCADE)
        # and so do its buffered feedback labels (a reopened draft can have some), keyed by trait key
        s.execute(
            delete(FeedbackLabel).where(
                FeedbackLabel.model_id == model.id, FeedbackLabel.trait_key == trait.key
            )
        )
        model.updated_at = utcnow()
        return Deleted(handle=model.handle, deleted=True)
