"""The labels a Label page's session gives: stored, undone, withdrawn, and the AUC curve they draw.

Every label is stored at once through `POST …/pool/{id}/label`, which the service routes by the model's state
at that moment (a sample of a draft, else buffered feedback for the next version, also while a run is in
flight), so a key press is never refused because a colleague started a training. A label costs one request
(and a suggestion request when the queue runs out), never a read of the stored samples: the curve's next
point is computed only when asked for (`update_curve`), by `core.engine.label_curve`, from embeddings the
workbench's sample cache keeps for the process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from app.labelling.campaign import where_it_went
from app.labelling.labels import retrain_at
from app.labelling.session import Given, Labelled, LabelSession
from core.client import ApiError, Client, ConflictError, Model, NotFoundError

if TYPE_CHECKING:  # the embedders and the engine bring in scikit-learn: imported when a point is asked for
    from core.embedders.base import Embedder


def update_curve(session: LabelSession, client: Client, embedder: Embedder) -> float | None:
    """Add the curve's point for the labels given so far: the out-of-fold ROC-AUC of every label of the trait
    (stored samples, and feedback sent this session). None (no point) until each pole has 2 labels."""
    from core.engine.label_curve import out_of_fold_auc

    rows = [
        (x.text, x.quality) for x in client.list_samples(session.handle, trait=session.trait, page_size=500)
    ]
    rows += [(g["text"], g["quality"]) for g in session.given]
    if not rows:
        return None
    X = np.asarray(embedder.encode([r[0] for r in rows]), dtype=np.float64)
    auc = out_of_fold_auc(X, np.asarray([r[1] for r in rows], dtype=np.float64))
    if auc is not None:
        point = (len(session.history), auc)
        session.curve = [p for p in session.curve if p[0] != point[0]] + [point]  # one point per label count
    return auc


def label_shown_text(
    session: LabelSession, quality: float, client: Client, model: Model, point: int | None = None
) -> None:
    """Store a label of the text shown: a pole's `quality`, or on a scale its `point` (of that quality);
    suggestions fetched in the background meanwhile know it is on its way (`_suggest`)."""
    session.labelling = True
    try:
        _store_label(session, quality, client, model, point)
    finally:
        session.labelling = False


#: A label the service refuses for the text itself, by error code: what the page says as it shows the next.
REFUSED = {
    # Its votes, counting colleagues who hold it, are all there.
    "pool_text_taken": "That label was not stored: the text already has the votes it wants, from colleagues "
    "who labelled it or are labelling it now. Here is the next.",
    # The evaluation set took the text after this queue was fetched.
    "pool_text_in_evaluation_set": "That label was not stored: the text is in the evaluation set now, which "
    "is never labelled nor trained on. Here is the next.",
}


def _store_label(
    session: LabelSession, quality: float, client: Client, model: Model, point: int | None
) -> None:
    item = session.current
    if item is None:
        return
    try:
        if point is None:
            out = client.label_pool_text(session.handle, int(item["id"]), session.trait, quality)
        else:
            out = client.label_pool_text(session.handle, int(item["id"]), session.trait, point=point)
    except ConflictError as exc:
        if exc.code not in REFUSED:
            raise
        session.queue.pop(session.pos)  # not to be labelled (any more): the next text
        session.message = REFUSED[exc.code]
        return
    done = out.votes >= out.votes_wanted
    if out.stored_as == "sample":
        session.history.append(
            Labelled(item=item, quality=quality, route="samples", ids=[out.id], feedback_id=None, done=done)
        )
    else:
        session.given.append(Given(trait=session.trait, text=item["text"], quality=quality))
        session.history.append(
            Labelled(item=item, quality=quality, route="feedback", ids=[], feedback_id=out.id, done=done)
        )
    session.queue.pop(session.pos)
    proposal = model.review and not session.reviewer
    session.message = where_it_went(out, retrain_at(client, session.handle), model.auto_retrain, proposal)


def undo_last_label(session: LabelSession, client: Client) -> None:
    if not session.history:
        session.message = "Nothing to undo."
        return
    last = session.history[-1]
    # Named by its text, never by the id the label route answered: a gold item's answer has an id of its own,
    # which as a sample's or a buffered label's would name another row.
    try:
        client.withdraw_pool_label(session.handle, int(last["item"]["id"]), session.trait)
    except NotFoundError:
        session.message = "That label has been trained on already (a training took it in): it stays."
        return
    except ApiError as exc:  # trained into a version (409 label_trained), or a training reading it now
        session.message = f"The label was not withdrawn: {exc.message}"
        return
    if last["feedback_id"] is not None:
        label = Given(trait=session.trait, text=last["item"]["text"], quality=last["quality"])
        if label in session.given:
            session.given.remove(label)
    session.history.pop()
    session.queue.insert(session.pos, last["item"])
    if session.curve and session.curve[-1][0] > len(session.history):
        session.curve.pop()
    session.message = (
        "Undone: the feedback label was withdrawn before a training took it."
        if last["route"] == "feedback"
        else "Undone: the label was removed."
    )


def forget_withdrawn_label(session: LabelSession, label_id: int, kind: str = "feedback") -> None:
    """A label of this session withdrawn (`kind` `feedback`: from the buffered-feedback list; `sample`: from
    "My labels"): it no longer counts as labelled, and undo no longer reaches it."""
    for i, h in enumerate(session.history):
        if (h["feedback_id"] == label_id) if kind == "feedback" else (label_id in h["ids"]):
            label = Given(trait=session.trait, text=h["item"]["text"], quality=h["quality"])
            if label in session.given:
                session.given.remove(label)
            del session.history[i]
            if session.curve and session.curve[-1][0] > len(session.history):
                session.curve.pop()
            return
