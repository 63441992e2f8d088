"""Traits: list, add, preview, change, delete, and discover new ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from core.client import tabular
from core.client.calls.base import ClientBase, _clean, _dump
from core.client.models import (
    DeleteResult,
    RunRef,
    Trait,
    TraitInput,
    TraitPreview,
    TraitScale,
)
from core.client.paths import path as _path
from core.client.retry import Safety
from core.contract import trait_key


class TraitCalls(ClientBase):
    @staticmethod
    def _traits(body: Any) -> list[Trait]:  # Any: the answer's JSON (a list, or an object with one)
        items = body.get("traits", []) if isinstance(body, dict) else body
        return [Trait.model_validate(t) for t in items]

    def list_traits(self, handle: str) -> list[Trait]:
        return self._traits(self._get(_path("models", handle, "traits")))

    def _with_only_trait(self, handle: str, rows: list[Mapping[str, object]]) -> list[Mapping[str, object]]:
        """`rows`, those without a `trait` given the model's trait when it has only one (a one-trait model's
        rows need not name it); rows of a model with several traits are left as they are."""
        if not any(isinstance(r, Mapping) and "trait" not in r for r in rows):
            return rows
        keys = [t.key for t in self.list_traits(handle)]
        if len(keys) != 1:
            return rows
        return [{**r, "trait": keys[0]} if isinstance(r, Mapping) and "trait" not in r else r for r in rows]

    def add_traits(
        self,
        handle: str,
        traits: Iterable[TraitInput | Mapping[str, object]],
        *,
        if_exists: Literal["return", "error", "add"] = "return",
    ) -> list[Trait]:
        """Add traits and answer the model's traits; dicts are validated as `TraitInput` first
        (pydantic.ValidationError if wrong).

        A trait whose key or name (any case) the model has already is, by `if_exists`: `"return"` not added
        (so a cell run twice answers what it made the first time), `"error"` a `ValueError` naming the trait
        there, `"add"` added all the same (the service then keys it `<key>_2`, docs/api.md)."""
        wanted = [TraitInput.model_validate(_dump(TraitInput, t)) for t in traits]
        if if_exists != "add":
            existing = self.list_traits(handle)
            by = {t.key: t for t in existing} | {t.name.casefold(): t for t in existing}
            there = [(t, by.get(trait_key(t.name)) or by.get(t.name.casefold())) for t in wanted]
            clashes = [(t, old) for t, old in there if old is not None]
            if clashes and if_exists == "error":
                new, old = clashes[0]
                raise ValueError(
                    f"the model {handle} already has trait {old.key!r} (named {old.name!r}) for "
                    f"{new.name!r}: pass if_exists='return' to use it, or 'add' for a second one"
                )
            wanted = [t for t, old in there if old is None]
            if not wanted:
                return existing
        payload = [t.model_dump(exclude_none=True) for t in wanted]
        response = self.request(
            "POST", _path("models", handle, "traits"), json={"traits": payload}, safety=Safety.ONCE
        )
        return self._traits(response.json())

    def preview_trait(
        self, handle: str, trait: TraitInput | Mapping[str, object], texts: Sequence[str] | object
    ) -> TraitPreview:
        """Zero-shot scores of 1-20 `texts` for a trait not yet added or trained (nothing is stored)."""
        body = {"trait": _dump(TraitInput, trait), "texts": tabular.texts(texts, "preview_trait")}
        response = self.request("POST", _path("models", handle, "traits", "preview"), json=body)
        return TraitPreview.model_validate(response.json())

    def update_trait(self, handle: str, key: str, **fields: object) -> list[Trait]:
        response = self.request("PATCH", _path("models", handle, "traits", key), json=fields)
        return self._traits(response.json())

    def set_scale(
        self, handle: str, key: str, scale: TraitScale | Mapping[str, object] | None
    ) -> list[Trait]:
        """How people label trait `key`: on a `scale` (`TraitScale`: 3-7 points, their words, an Unsure
        key), or None for its two poles again. Its stored labels keep the point their quality lies on. An
        untrained (or reopened) model only, as every trait edit."""
        body = "poles" if scale is None else _dump(TraitScale, scale)
        return self.update_trait(handle, key, scale=body)

    def delete_trait(self, handle: str, key: str) -> DeleteResult:
        response = self.request("DELETE", _path("models", handle, "traits", key))
        return DeleteResult.model_validate(response.json())

    def discover(self, handle: str, effort: str | None = None) -> RunRef:
        """Start trait discovery; 409 `duplicate_run` (ConflictError.run_id) if it already ran."""
        response = self.request(
            "POST",
            _path("models", handle, "traits", "discover"),
            json=_clean({"effort": effort}),
            safety=Safety.ONCE,
        )
        return self._run_ref(response)
