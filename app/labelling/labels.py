"""One way to turn an analyst's labels into training data, whatever the model's state.

A draft model takes samples; a ready model's samples are frozen (the spec's rule 2), so its new labels go
in as score feedback, the spec's path for a ready model to learn (buffered for its next version: an automatic
retraining where it is on, else the owner's next training). On a reviewed model an annotator's label is a
proposal that trains only once accepted (`review_note`).
The Samples page calls `add_labels` and shows `LabelResult.message` (the Label page labels pool texts through
`POST …/pool/{id}/label`, which the service routes itself: app/labelling/labels_given.py), and
`labelling_note` says up front what will happen to a label on this model. A feedback label can be withdrawn
until a training takes it (`withdraw_label`; the buffer is the service's, `GET …/feedback`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.client import ApiError, Client, Model
from core.model_states import can


class LabelsRefused(Exception):
    """The model cannot take labels now; the message says why and what to do, in the user's words."""


_RETRAIN_AT: dict[str, int | None] = {}  # per service URL: its retrain buffer (a setting: it does not change)


def retrain_at(client: Client, handle: str) -> int | None:
    """How many buffered labels start an automatic retraining, as the service says (`GET …/feedback`'s
    `retrain_at`, its SCORING_RETRAIN_BUFFER); None from a service without that route or a key that may not
    read the buffer. Asked once per service."""
    if client.base_url not in _RETRAIN_AT:
        try:
            _RETRAIN_AT[client.base_url] = client.feedback_page(handle, limit=1).retrain_at
        except ApiError:
            return None  # not remembered: another model, or a later key, may be allowed to read it
    return _RETRAIN_AT[client.base_url]


@dataclass(frozen=True)
class LabelResult:
    route: Literal["samples", "feedback"]
    ids: list[int] = field(default_factory=list)  # new sample ids (draft)
    buffered: int | None = None  # labels waiting in the buffer for the next version (ready), after this call
    retraining: bool = False  # the labels filled the buffer: the automatic retraining has started
    retrain_at: int | None = None  # the buffer size that retrains (the service's setting)
    auto_retrain: bool = True  # the model's automatic retraining is on (off: paused, a team's default)

    @property
    def message(self) -> str:
        if self.route == "samples":
            return f"Added {len(self.ids)} sample(s)."
        head = "Sent as feedback to the trained model."
        if self.retraining:
            return head + " The buffer was full: an automatic retraining has started (a new version follows)."
        return head + " " + retrain_when(self.buffered or 0, self.retrain_at, self.auto_retrain)


PAUSED = (
    "Automatic retraining is **paused** on this model (a team's model starts so): nothing retrains by "
    "itself; the labels wait until an owner trains them in (**Train the waiting labels**, Training page) or "
    "turns retraining on (Team page)."
)


def retrain_when(buffered: int, at: int | None, auto: bool = True) -> str:
    """When the buffered labels will retrain the model, in the user's words (`auto`: the model's automatic
    retraining is on)."""
    if not auto:
        return f"{buffered} label(s) are waiting. {PAUSED}"
    if at is None:
        return (
            f"{buffered} label(s) are waiting; the service retrains the model automatically once its buffer "
            "is full, making a new version from them."
        )
    return (
        f"{buffered} of {at} label(s) are waiting: at {at} the service retrains the model automatically "
        f"({max(at - buffered, 1)} more), making a new version from them. A label can be withdrawn until "
        "then."
    )


def labelling_note(model: Model, at: int | None = None, count: bool = True) -> str | None:
    """What happens to a new label on `model` (`at`: the service's retrain buffer); None for a draft.
    `count=False` leaves out how many labels wait now (a page whose labels change it below says that)."""
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
    if not model.auto_retrain:
        return (
            "This model is trained, so its stored samples are frozen: a new label goes in as **score "
            f"feedback**, buffered for its next version. {PAUSED}"
        )
    tags = ", ".join(f"`{t}`" for t in model.version_tags)
    kept = f" (its tags {tags} stay on v{model.version_no})" if tags else ""
    return (
        "This model is trained, so its stored samples are frozen: a new label goes in as **score feedback**, "
        f"which **retrains it**: a new version becomes the active one{kept}, unless it scores worse than the "
        "serving one on the model's evaluation set. "
        + (
            retrain_when(model.buffered_feedback or 0, at)
            if count
            else f"That happens when {at or 'enough'} labels are buffered; each can be withdrawn until then."
        )
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
    return LabelResult(
        "feedback",
        buffered=after.buffered_feedback,
        retraining=after.state == "busy",
        retrain_at=retrain_at(client, handle),
        auto_retrain=after.auto_retrain,
    )


def review_note(model: Model, reviewer: bool) -> str | None:
    """What review means for this person's labels on `model` (`reviewer`: they may review, so their own
    labels are accepted as given); None when their labels train as given."""
    if not model.review or reviewer:
        return None
    rule = (
        " or once the votes wanted agree (at least 2 people, one pole)"
        if model.accept_rule == "agreement"
        else ""
    )
    return (
        "Review is on for this model: each of your labels is **a proposal**, pending until a reviewer "
        f"accepts it{rule}. Only accepted labels train; a rejected one never does, and the Team page shows "
        "it to you with the reviewer's comment."
    )


def withdraw_label(
    client: Client, handle: str, label: Mapping[str, Any], annotator: str | None = None
) -> bool:
    """Withdraw the newest buffered feedback label equal to `label` (`trait`, `text`, `quality`) that
    `annotator` sent (None: anyone's, as a service without annotators says); False when it is no longer in the
    buffer (a retraining took it). Raises the service's error while it retrains."""
    text = str(label["text"]).strip()
    found = [
        f
        for f in client.list_feedback(handle, page_size=500)
        if f.trait == label["trait"]
        and f.text == text
        and f.quality == float(label["quality"])
        and (annotator is None or f.annotator in (None, annotator))  # a colleague's equal label stays
    ]
    if not found:
        return False
    client.withdraw_feedback(handle, found[-1].id)
    return True
