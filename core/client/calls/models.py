"""Models: list, create, read, change, reopen, delete."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from core.client import errors
from core.client.calls.base import ClientBase, _clean, archived_hint
from core.client.models import (
    DeleteResult,
    KeyInfo,
    Model,
    Page,
)
from core.client.paths import path as _path
from core.client.retry import Safety
from core.contract import PUBLIC_NAMESPACE
from core.json_types import JsonObject


class ModelCalls(ClientBase):
    def list_models_page(
        self,
        namespace: str | None = None,
        state: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Model]:
        params = {"namespace": namespace, "state": state, "kind": kind, "limit": limit, "cursor": cursor}
        return Page[Model].model_validate(self._get("/models", params))

    def list_models(
        self,
        namespace: str | None = None,
        state: str | None = None,
        kind: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Model]:
        """Every model (following `next_cursor`) of `namespace`; without it, of every namespace the key
        belongs to and then the public catalog's (`namespace="public"`: the catalog alone), so a notebook's
        `list(client.list_models())` shows its own models. `list_models_page` is the one request as sent."""
        if namespace is not None:
            return self._paginate(
                lambda cursor: self.list_models_page(namespace, state, kind, limit=page_size, cursor=cursor)
            )
        key = KeyInfo.model_validate(self._get("/keys/current"))
        spaces = list(dict.fromkeys([*key.namespaces, *key.roles, PUBLIC_NAMESPACE]))
        return itertools.chain.from_iterable(
            self.list_models(space, state, kind, page_size=page_size) for space in spaces
        )

    def create_model(
        self,
        handle: str,
        *,
        description: str = "",
        scoring_method: str | None = None,
        kind: str | None = None,
        max_depth: int | None = None,
        additional_terms: str | None = None,
        upstream_sources: list[JsonObject] | None = None,
        readme_markdown: str | None = None,
        zero_data_retention: bool | None = None,
        embedder: str | None = None,
    ) -> Model:
        """`embedder`, fixed for good (default: the service's, `"auto"` unless it is set up otherwise):
        `"auto"` (each training keeps the embedder that serves the model best: e5-small-qint8, or mpnet-base
        on longer English texts), or one embedder: "e5-small-qint8", "mpnet-base", "minilm-qint8v2", "minilm",
        "e5-small", "hashing" or their ids."""
        body = _clean(
            {
                "handle": handle,
                "description": description,
                "scoring_method": scoring_method,
                "kind": kind,
                "max_depth": max_depth,
                "additional_terms": additional_terms,
                "upstream_sources": upstream_sources,
                "readme_markdown": readme_markdown,
                "zero_data_retention": zero_data_retention,
                "embedder": embedder,
            }
        )
        response = self.request("POST", "/models", json=body, safety=Safety.ONCE)
        return Model.model_validate(response.json())

    def get_model(self, handle: str) -> Model:
        return Model.model_validate(self._get(_path("models", handle)))

    def get_or_create_model(self, handle: str, **fields: Any) -> Model:  # Any: create_model's keywords
        """The model `handle`, created with `fields` (`create_model`'s) when there is none, so a notebook cell
        can run twice. An archived model (`delete_model` without `purge`) is a `ConflictError`
        (`model_archived`) saying how to start over: it refuses every write, so answering it would only move
        the failure to the next cell; `delete_model(handle, purge=True)` frees its handle for good."""
        try:
            return self._not_archived(self.get_model(handle))
        except errors.NotFoundError:
            pass
        try:
            return self.create_model(handle, **fields)
        except errors.ConflictError as exc:
            if exc.code != "handle_taken":  # created meanwhile (another cell, a colleague): that one
                raise
            return self._not_archived(self.get_model(handle))

    @staticmethod
    def _not_archived(model: Model) -> Model:
        if model.state != "archived":
            return model
        raise errors.ConflictError(
            409, "model_archived", "The model is archived; it can only be read." + archived_hint(model.handle)
        )

    def update_model(self, handle: str, **fields: object) -> Model:
        """PATCH the given fields as they are (`auto_prune=None` sends null: back to the defaults)."""
        response = self.request("PATCH", _path("models", handle), json=fields)
        return Model.model_validate(response.json())

    def reopen(self, handle: str) -> Model:
        """Back to `draft` to edit traits and samples while the active version keeps serving; the next
        `train` makes version N+1. Safe to repeat (a draft answers unchanged)."""
        return Model.model_validate(self.request("POST", _path("models", handle, "reopen")).json())

    def delete_model(self, handle: str, *, purge: bool = False) -> DeleteResult:
        """Archive the model (it stays readable; its handle stays taken). `purge=True` (the owner's) deletes
        it and everything stored under it for good, archived or not, so its handle can be created again."""
        params = {"purge": "true"} if purge else None
        return DeleteResult.model_validate(
            self.request("DELETE", _path("models", handle), params=params).json()
        )
