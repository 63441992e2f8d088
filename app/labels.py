"""One way to turn an analyst's labels into training data, whatever the model's state.

A draft model takes samples; a ready model's samples are frozen (the spec's rule 2), so its new labels go
in as score feedback, the spec's path for a ready model to learn (buffered, then an automatic retraining).
Pages that label (Samples, Label) call `add_labels` and show `LabelResult.message`, and `labelling_note` says
up front what will happen to a label on this model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.client import Client, Model
from core.contract import DEFAULT_RETRAIN_BUFFER, can

# The service retrains once this many labels are buffered (`SCORING_RETRAIN_BUFFER`); the API does not
# report its setting, so the pages name the documented default.
RETRAIN_BUFFER = DEFAULT_RETRAIN_BUFFER


class LabelsRefused(Exception):
    """The model cannot take labels now; the message says why and what to do, in the user's words."""


@dataclass(frozen=True)
class LabelResult:
    route: Literal["samples", "feedback"]
    ids: list[int] = field(default_factory=list)  # new sample ids (draft)
    buffered: int | None = None  # labels waiting for the automatic retraining (ready), after this call
    retraining: bool = False  # the labels filled the buffer: the automatic retraining has started

    @property
    def message(self) -> str:
        if self.route == "samples":
            return f"Added {len(self.ids)} sample(s)."
        head = "Sent as feedback to the trained model."
        if self.retraining:
            return head + " The buffer was full: an automatic retraining has started (a new version follows)."
        return head + " " + retrain_when(self.buffered or 0)


def retrain_when(buffered: int) -> str:
    """When the buffered labels will retrain the model, in the user's words."""
    left = max(RETRAIN_BUFFER - buffered, 1)
    return (
        f"{buffered} label(s) are waiting; the service retrains the model automatically when "
        f"{RETRAIN_BUFFER} have been sent (about {left} more, unless the service is set up with another "
        "threshold), making a new version from them."
    )


def labelling_note(model: Model) -> str | None:
    """What happens to a new label on `model`; None for a draft (plain samples)."""
    state, handle = model.state, model.handle
    if can("edit", state):
        return None
    if state != "ready":
        return f"`{handle}` is **{state}**: labels can be added again once the running operation ends."
    if model.zero_data_retention:
        return (
            f"`{handle}` is trained and has **zero data retention** on: the service keeps no text, so new "
            "labels cannot be stored as feedback and the model cannot learn from them. To keep labelling, "
            "create a draft model (without zero data retention) and add the samples there."
        )
    return (
        "This model is trained, so its stored samples are frozen: a new label goes in as **score feedback**. "
        + retrain_when(model.buffered_feedback or 0)
    )


def add_labels(client: Client, model: Model, labels: Sequence[Mapping[str, Any]]) -> LabelResult:
    """Store `labels` (`{"trait", "text", "quality"}` each): samples on a draft, feedback on a ready model.

    `model` is the model as last read; raises `LabelsRefused` when it cannot
    take labels.
    """
    state, handle = model.state, model.handle
    if can("edit", state):
        return LabelResult("samples", ids=client.add_samples(handle, labels))
    note = labelling_note(model)
    if state != "ready" or model.zero_data_retention:
        raise LabelsRefused(note or f"{handle} cannot take labels now.")
    by_text: dict[str, list[dict[str, Any]]] = {}
    for label in labels:
        by_text.setdefault(str(label["text"]), []).append(
            {"trait": label["trait"], "quality": float(label["quality"])}
        )
    for text, feedback in by_text.items():
        client.score(handle, text, feedback=feedback)
    # The count is the model's (`buffered_feedback`): the score answer's `feedback_buffered` counts only the
    # labels of that request, which made the page say "1 waiting" while the service held 8.
    after = client.get_model(handle)
    return LabelResult("feedback", buffered=after.buffered_feedback, retraining=after.state == "busy")
