"""One way to turn an analyst's labels into training data, whatever the model's state.

A draft model takes samples; a ready model's samples are frozen (the spec's rule 2), so its new labels go
in as score feedback, the spec's path for a ready model to learn (buffered, then an automatic retraining).
Pages that label (Samples, Label) call `add_labels` and show `LabelResult.message`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.client import Client, Model


class LabelsRefused(Exception):
    """The model cannot take labels now; the message says why and what to do, in the user's words."""


@dataclass(frozen=True)
class LabelResult:
    route: Literal["samples", "feedback"]
    ids: list[int] = field(default_factory=list)  # new sample ids (draft)
    buffered: int | None = None  # labels waiting for the automatic retraining (ready), after this call

    @property
    def message(self) -> str:
        if self.route == "samples":
            return f"Added {len(self.ids)} sample(s)."
        waiting = ""
        if self.buffered:
            waiting = f" {self.buffered} label(s) now wait for the next automatic retraining."
        return "Sent as feedback to the trained model." + waiting


def add_labels(client: Client, model: Model, labels: Sequence[Mapping[str, Any]]) -> LabelResult:
    """Store `labels` (`{"trait", "text", "quality"}` each): samples on a draft, feedback on a ready model."""
    if model.state == "draft":
        return LabelResult("samples", ids=client.add_samples(model.handle, labels))
    if model.state != "ready":
        raise LabelsRefused(
            f"{model.handle} is {model.state}; labels can be added to a draft or a ready model. "
            "Wait for the running operation to finish, then try again."
        )
    if model.zero_data_retention:
        raise LabelsRefused(
            f"{model.handle} has zero-data-retention on, so a trained version cannot learn from new labels "
            "(the service keeps no text). Create a new draft model to add samples."
        )
    by_text: dict[str, list[dict[str, Any]]] = {}
    for label in labels:
        by_text.setdefault(str(label["text"]), []).append(
            {"trait": label["trait"], "quality": float(label["quality"])}
        )
    buffered: int | None = None
    for text, feedback in by_text.items():
        result = client.score(model.handle, text, feedback=feedback)
        buffered = result.feedback_buffered if result.feedback_buffered is not None else buffered
    return LabelResult("feedback", buffered=buffered)
