"""Gold items: texts with a known answer mixed into people's suggestions, and each person's accuracy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.client.calls.base import ClientBase
from core.client.models.gold import GoldAccuracy, GoldAdded, GoldDeleted, GoldSet
from core.client.paths import path as _path


class GoldCalls(ClientBase):
    def add_gold(self, handle: str, items: Iterable[Mapping[str, object]]) -> GoldAdded:
        """Add texts with their known answer (`trait`, `text`, `quality` on a pole, optional `metadata` for
        the pool text; up to 500) as gold items. Safe to repeat: gold already adds nothing. Reviewers and
        owners."""
        body = {"items": [dict(x) for x in items]}
        return GoldAdded.model_validate(
            self.request("POST", _path("models", handle, "gold"), json=body).json()
        )

    def promote_gold(self, handle: str, trait: str, count: int) -> GoldAdded:
        """Make up to `count` settled texts of `trait` gold items (chosen at random; their settling vote is
        the known answer)."""
        body = {"trait": trait, "count": count}
        response = self.request("POST", _path("models", handle, "gold", "promote"), json=body)
        return GoldAdded.model_validate(response.json())

    def gold(self, handle: str) -> GoldSet:
        """Every gold item with its known answer and how many people answered it (rightly)."""
        return GoldSet.model_validate(self._get(_path("models", handle, "gold")))

    def delete_gold(self, handle: str, gold_id: int) -> GoldDeleted:
        """Remove a gold item and its answers; its text stays in the pool as an ordinary text."""
        return GoldDeleted.model_validate(
            self.request("DELETE", _path("models", handle, "gold", gold_id)).json()
        )

    def gold_accuracy(self, handle: str) -> GoldAccuracy:
        """Per person: gold items answered, correct, the accuracy's Wilson interval and whether it is flagged
        (surely under the model's `gold_threshold`). Reviewers and owners."""
        return GoldAccuracy.model_validate(self._get(_path("models", handle, "gold", "accuracy")))
