"""A labelling campaign as the Label page shows it: the model's live state, which version labels go into,
and the owner's switch for automatic retraining (docs/api.md, "Claims and votes wanted").

Labels go in through `POST …/pool/{id}/label`, which the service routes by the model's state at that moment
(a sample of a draft, else buffered feedback): the page never has to guess, and says where each label went.
"""

from __future__ import annotations

from app.labelling.labels import retrain_when
from app.ui.inert import escape_md
from core.client import Model, PoolLabel
from core.model_states import TRAINING_RUNS, can


def campaign_of(model: Model) -> tuple[object, ...]:
    """What an open Label page follows of the model: a change of any reruns the page (its counts, its
    overlap and votes wanted, where labels go) and asks for suggestions afresh."""
    return (model.state, model.version_no, model.overlap, model.votes_wanted, model.auto_retrain)


def next_version(model: Model) -> int:
    """The version a label given now is trained into."""
    base = model.version_no or 0
    op = model.last_operation
    # A label given while a run that makes a version is in flight goes into the version after it.
    training = model.state == "busy" and op is not None and op.kind in TRAINING_RUNS
    return base + (2 if training else 1)


def where_it_went(
    out: PoolLabel, retrain_at: int | None = None, auto: bool = True, proposal: bool = False
) -> str:
    """One label's destination, in the user's words (`retrain_at`: the service's retrain buffer; `auto`: the
    model's automatic retraining is on; `proposal`: the label waits for a reviewer, docs/api.md "Review")."""
    pending = " It is a proposal: it trains once a reviewer accepts it." if proposal else ""
    if out.stored_as == "sample":
        return f"Added 1 sample(s). Saved to the draft: its next training makes v{out.version_no}.{pending}"
    head = f"Sent as feedback: buffered for the next version v{out.version_no}.{pending}"
    if out.retraining:
        return head + " The buffer was full: an automatic retraining has started."
    if out.state == "busy":
        return head + " A run is in flight; the label waits for the version after it."
    return head + " " + retrain_when(out.buffered_feedback, retrain_at, auto)


def status_line(model: Model, retrain_at: int | None, buffered: bool = True) -> str:
    """The model's state, the version serving, where labels go, and the buffer and pause state
    (`buffered=False`: not the buffer's count, which the page lists beside it, read with its labels)."""
    serving = f"v{model.version_no:d} serving" if model.version_no else "no version yet"
    state = escape_md(model.state)
    op = model.last_operation
    if model.state == "busy" and op is not None:
        fraction = op.progress.get("fraction") if isinstance(op.progress, dict) else None
        share = f", {fraction:.0%}" if isinstance(fraction, (int, float)) else ""
        state = f"busy ({escape_md(str(op.kind))}{share})"
    into = next_version(model)
    editable = can("edit", model.state)  # an untrained model: labels are its samples
    if editable:
        goes = f"labels are samples of the draft, for v{into:d}"
    else:
        goes = f"labels are buffered for **v{into:d}**"
    parts = [f"**{state}**", serving, goes]
    if buffered and (not editable or model.buffered_feedback):
        at = f" of {retrain_at:,}" if retrain_at else ""
        parts.append(f"{model.buffered_feedback or 0:,}{at} buffered")
    if not model.auto_retrain:
        parts.append(":material/pause_circle: automatic retraining **paused**")
    if model.votes_wanted > 1:
        parts.append(f"{model.votes_wanted:d} votes wanted per text")
    return " · ".join(parts)
