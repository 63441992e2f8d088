"""The review queue: read it, accept or reject labels (docs/api.md "Review")."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from core.client.calls.base import ClientBase
from core.client.models import LabelsRemoved, LabelsRestored, Reviewed, ReviewItem, ReviewPage
from core.client.paths import path as _path
from core.client.retry import Safety


class ReviewCalls(ClientBase):
    def review_page(
        self, handle: str, status: str = "pending", limit: int | None = None, cursor: str | None = None
    ) -> ReviewPage:
        """A page of the model's labels of one status (`pending`, `accepted`, `rejected`), votes then
        buffered feedback, with each person's figures; an annotator reads only their own."""
        params = {"status": status, "limit": limit, "cursor": cursor}
        return ReviewPage.model_validate(self._get(_path("models", handle, "review"), params))

    def list_review(
        self, handle: str, status: str = "pending", page_size: int | None = None
    ) -> Iterator[ReviewItem]:
        return self._paginate(lambda cursor: self.review_page(handle, status, page_size, cursor))

    def review_labels(
        self,
        handle: str,
        decision: str,
        items: Iterable[ReviewItem | tuple[str, int]],
        comment: str | None = None,
    ) -> Reviewed:
        """Accept or reject labels (`decision` "accept" or "reject"; the reviewer role), all or none; `items`
        are queue items or (kind, id) pairs, `comment` the reason their authors read."""
        refs = [
            {"kind": i.kind, "id": i.id} if isinstance(i, ReviewItem) else {"kind": i[0], "id": i[1]}
            for i in items
        ]
        body: dict[str, object] = {"decision": decision, "items": refs}
        if comment:
            body["comment"] = comment
        response = self.request("POST", _path("models", handle, "review"), json=body)
        return Reviewed.model_validate(response.json())

    def correct_label(
        self,
        handle: str,
        label_id: int,
        quality: float | None = None,
        *,
        point: int | None = None,
        comment: str | None = None,
    ) -> ReviewItem:
        """Correct label `label_id` (the reviewer role): `quality` (0–1) or, on a trait rated on a scale,
        `point`, becomes what training reads; the label keeps its id, and its annotator's quality stays
        (`original_quality`, `Client.text_history`). Safe to repeat: the same correction again changes
        nothing."""
        if (quality is None) == (point is None):
            raise ValueError("give a quality or a point, not both")
        body: dict[str, object] = {"quality": quality} if point is None else {"point": point}
        if comment:
            body["comment"] = comment
        path = _path("models", handle, "labels", str(label_id), "correct")
        response = self.request("POST", path, json=body)
        return ReviewItem.model_validate(response.json())

    def remove_labels(self, handle: str, annotator: str) -> LabelsRemoved:
        """Remove every label (votes, feedback labels, unsure marks) of `annotator` on the model (an owner's
        call, audited); `undo` in the answer restores them within the hour. Never repeated: a repeat would
        answer without the first call's `undo`."""
        response = self.request(
            "DELETE", _path("models", handle, "labels"), params={"annotator": annotator}, safety=Safety.ONCE
        )
        return LabelsRemoved.model_validate(response.json())

    def restore_labels(self, handle: str, undo: str) -> LabelsRestored:
        """Undo `remove_labels` with its `undo` token, within the hour."""
        path = _path("models", handle, "labels", "restore")
        response = self.request("POST", path, json={"undo": undo}, safety=Safety.ONCE)
        return LabelsRestored.model_validate(response.json())
