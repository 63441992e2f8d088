"""Assigned work: give pool texts to named people, list their work, move or remove it, set targets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.client.calls.base import ClientBase
from core.client.models import Assigned, Assignments, Reassigned, Unassigned
from core.client.paths import path as _path
from core.json_types import JsonObject


class AssignmentCalls(ClientBase):
    def assign(
        self,
        handle: str,
        annotator: str,
        *,
        ids: Sequence[int] | None = None,
        search: str | None = None,
        meta: Mapping[str, object] | None = None,
        count: int | None = None,
    ) -> Assigned:
        """Give pool texts to `annotator` (an owner's): these `ids`, or up to `count` texts containing
        `search` and whose metadata has each of the `meta` values (as text, as `list_pool`'s `meta`), or any
        without them, that nobody has and the person has not labelled, oldest first. Their queue serves them
        first; colleagues are not handed them until the person votes on them."""
        body: JsonObject = {"annotator": annotator}
        if ids is not None:
            body["ids"] = list(ids)
        where: JsonObject = {}
        if search is not None:
            where["q"] = search
        if meta:
            where["meta"] = {key: f"{value}" for key, value in meta.items()}
        if where:
            body["filter"] = where
        if count is not None:
            body["count"] = count
        response = self.request("POST", _path("models", handle, "assignments"), json=body)
        return Assigned.model_validate(response.json())

    def assignments(self, handle: str) -> Assignments:
        """Per person: texts assigned, labelled and remaining, their target and how far they are."""
        return Assignments.model_validate(self._get(_path("models", handle, "assignments")))

    def unassign(self, handle: str, annotator: str) -> Unassigned:
        """The person's texts not labelled yet leave their assignment (back to the shared pool)."""
        response = self.request("DELETE", _path("models", handle, "assignments", annotator))
        return Unassigned.model_validate(response.json())

    def reassign(self, handle: str, annotator: str, to: str) -> Reassigned:
        """Move the person's texts not labelled yet to `to`, in one action (their claims on them end)."""
        url = _path("models", handle, "assignments", annotator, "reassign")
        return Reassigned.model_validate(self.request("POST", url, json={"to": to}).json())

    def set_target(self, handle: str, annotator: str, count: int | None, period: str = "day") -> Assignments:
        """The person's target: `count` texts per UTC `day` or in all (`total`); None removes it."""
        url = _path("models", handle, "assignments", annotator, "target")
        body: JsonObject = {"count": count, "period": period}
        return Assignments.model_validate(self.request("PUT", url, json=body).json())
