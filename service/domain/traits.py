"""A model's traits: list, add, update, delete (edits only on an untrained model), and the one rule for
finding a trait a request names (by key or by name)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from core.contract import MAX_TRAITS, trait_key, unique_trait_key
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.needs import Databases
from service.domain.scales import stored_scale
from service.domain.states import require
from service.domain.views import traits_out
from service.errors import ApiError
from service.schemas.common import Deleted
from service.schemas.traits import TraitIn, TraitPatch, TraitsOut
from service.store import audit
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.samples import repoint
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait, utcnow


class TraitRefs:
    """The model's traits by key or by name, as a request names them; a key wins over another's name."""

    def __init__(self, s: Session, model: Model) -> None:
        self.handle = model.handle
        self.traits = list(s.scalars(select(Trait).where(Trait.model_id == model.id).order_by(Trait.id)))
        self._by = {t.name: t for t in self.traits} | {t.key: t for t in self.traits}

    @property
    def ids(self) -> dict[str, int]:
        return {t.key: t.id for t in self.traits}

    def find(self, ref: str, loc: Sequence[str | int]) -> Trait:
        """The trait named `ref`, or 422 `unknown_trait` pointing at the request field `loc`."""
        trait = self._by.get(ref)
        if trait is None:
            raise unknown_trait(ref, self.handle, loc)
        return trait


def unknown_trait(ref: str, handle: str, loc: Sequence[str | int]) -> ApiError:
    # `["body", "samples", 3, "trait"]` reads as "samples[3]: " before the message.
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:-1]).lstrip(".")
    prefix = f"{where}: " if where else ""
    return ApiError(
        422,
        "unknown_trait",
        f"{prefix}no trait {ref!r} in {handle}.",
        details=[{"loc": list(loc), "msg": "unknown trait", "type": "unknown_trait"}],
    )


def find_trait(s: Session, model: Model, key: str) -> Trait:
    """The trait at `…/traits/{key}` (a path names a trait by key only), or 404."""
    trait = s.scalar(select(Trait).where(Trait.model_id == model.id, Trait.key == key))
    if trait is None:
        raise ApiError(404, "trait_not_found", f"No trait {key!r} in {model.handle}.")
    return trait


def list_traits(ctx: Databases, who: Principal, handle: str) -> TraitsOut:
    with transaction(ctx.reads) as s:
        return TraitsOut(traits=traits_out(s, load_model(s, who, handle)))


def add_traits(ctx: Databases, who: Principal, handle: str, new: list[TraitIn]) -> TraitsOut:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require(s, model, "edit")
        taken = set(s.scalars(select(Trait.key).where(Trait.model_id == model.id)))
        if len(taken) + len(new) > MAX_TRAITS:
            raise ApiError(422, "validation_error", f"A model has at most {MAX_TRAITS} traits.")
        added: list[str] = []
        for t in new:
            key = unique_trait_key(trait_key(t.name), taken)
            taken.add(key)
            added.append(key)
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
                    scale=stored_scale(t.scale, t.negative_label, t.positive_label) if t.scale else None,
                )
            )
        audit.record(s, who, "traits_changed", model.namespace, model, {"added": list(added)})
        model.updated_at = utcnow()
        s.flush()
        return TraitsOut(traits=traits_out(s, model))


def update_trait(ctx: Databases, who: Principal, handle: str, key: str, patch: TraitPatch) -> TraitsOut:

    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        trait = find_trait(s, model, key)
        require(s, model, "edit")
        changed: list[str] = []
        for name, value in patch.model_dump(exclude_unset=True, exclude={"scale"}).items():
            if value is not None:  # null leaves the field unchanged; the key never changes
                setattr(trait, name, value)
                changed.append(name)
        if patch.scale is not None:
            scale = patch.scale  # "poles", or a scale
            named = (trait.negative_label, trait.positive_label)
            trait.scale = None if isinstance(scale, str) else stored_scale(scale, *named)
            repoint(s, trait)  # its labels keep the point their quality lies on now
            changed.append("scale")
        # The fields' names, not their texts (the log keeps no text).
        detail: JsonObject = {"changed": key, "fields": list(changed)}
        audit.record(s, who, "traits_changed", model.namespace, model, detail)
        model.updated_at = utcnow()
        s.flush()
        return TraitsOut(traits=traits_out(s, model))


def delete_trait(ctx: Databases, who: Principal, handle: str, key: str) -> Deleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        trait = find_trait(s, model, key)
        require(s, model, "edit")
        samples = s.scalar(select(func.count()).select_from(SampleRow).where(SampleRow.trait_id == trait.id))
        detail = {"deleted": trait.key, "samples": samples or 0}
        audit.record(s, who, "traits_changed", model.namespace, model, detail)
        s.delete(trait)  # its samples go with it (ON DELETE CASCADE)
        # and so do its buffered feedback labels (a reopened draft can have some), keyed by trait key
        s.execute(
            delete(FeedbackLabel).where(
                FeedbackLabel.model_id == model.id, FeedbackLabel.trait_key == trait.key
            )
        )
        model.updated_at = utcnow()
        return Deleted(handle=model.handle, deleted=True)
