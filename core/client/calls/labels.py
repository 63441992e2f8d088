"""One's own labels (list, change, withdraw) and a model's versioned guidelines."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from core.client.calls.base import ClientBase
from core.client.models import (
    Guidelines,
    GuidelinesPage,
    GuidelinesVersion,
    MyLabel,
    MyLabelPage,
    MyLabelWithdrawn,
)
from core.client.paths import path as _path
from core.json_types import JsonObject


class LabelCalls(ClientBase):
    def my_labels_page(
        self,
        handle: str,
        *,
        q: str | None = None,
        trait: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> MyLabelPage:
        """A page of this key's own labels on the model, newest first: those whose text contains `q` (any
        case), of `trait`, given at or after `since`; `total` counts them all (a session's count)."""
        params = {
            "q": q,
            "trait": trait,
            "since": since.isoformat() if since else None,
            "limit": limit,
            "cursor": cursor,
        }
        return MyLabelPage.model_validate(self._get(_path("models", handle, "my-labels"), params))

    def my_labels(
        self, handle: str, *, q: str | None = None, trait: str | None = None, page_size: int | None = None
    ) -> Iterator[MyLabel]:
        return self._paginate(
            lambda cursor: self.my_labels_page(handle, q=q, trait=trait, limit=page_size, cursor=cursor)
        )

    def change_my_label(
        self, handle: str, kind: str, label_id: int, quality: float | None = None, *, point: int | None = None
    ) -> MyLabel:
        """A new quality for one's own label (`kind` `sample` or `feedback`) while it is not trained into a
        version (after: `ConflictError`, code `label_trained`); on a trait rated on a scale, a `point` 1..N
        instead (`Trait.scale`; a point off the scale or of a pole trait is refused, 422)."""
        path = _path("models", handle, "my-labels", kind, label_id)
        body: JsonObject = {}
        if quality is not None:
            body["quality"] = quality
        if point is not None:
            body["point"] = point
        return MyLabel.model_validate(self.request("PATCH", path, json=body).json())

    def withdraw_my_label(self, handle: str, kind: str, label_id: int) -> MyLabelWithdrawn:
        """Delete one's own label while it is not trained into a version."""
        path = _path("models", handle, "my-labels", kind, label_id)
        return MyLabelWithdrawn.model_validate(self.request("DELETE", path).json())

    def withdraw_pool_label(self, handle: str, text_id: int, trait: str) -> MyLabelWithdrawn:
        """Undo one's label of pool text `text_id` for `trait` (the Label page's `u`): named by the text, as a
        label of a gold item has no id of its own to name it by."""
        path = _path("models", handle, "pool", text_id, "label")
        return MyLabelWithdrawn.model_validate(self.request("DELETE", path, params={"trait": trait}).json())

    def guidelines(self, handle: str) -> Guidelines:
        """The model's current guidelines, and whether they changed since this key last read them."""
        return Guidelines.model_validate(self._get(_path("models", handle, "guidelines")))

    def save_guidelines(self, handle: str, markdown: str, note: str = "") -> Guidelines:
        """Save the guidelines as a new version (the owner's); the same Markdown again adds none."""
        body = {"markdown": markdown, "note": note}
        return Guidelines.model_validate(
            self.request("PUT", _path("models", handle, "guidelines"), json=body).json()
        )

    def guidelines_versions_page(
        self, handle: str, limit: int | None = None, cursor: str | None = None
    ) -> GuidelinesPage:
        path = _path("models", handle, "guidelines", "versions")
        return GuidelinesPage.model_validate(self._get(path, {"limit": limit, "cursor": cursor}))

    def guidelines_versions(self, handle: str, page_size: int | None = None) -> Iterator[GuidelinesVersion]:
        """Every version of the guidelines, newest first: who saved it, when, what changed."""
        return self._paginate(
            lambda cursor: self.guidelines_versions_page(handle, limit=page_size, cursor=cursor)
        )

    def mark_guidelines_read(self, handle: str, version_no: int) -> Guidelines:
        """Record that this key read version `version_no` of the guidelines."""
        path = _path("models", handle, "guidelines", "read")
        return Guidelines.model_validate(self.request("POST", path, json={"version_no": version_no}).json())
