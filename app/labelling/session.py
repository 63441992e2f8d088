"""The Label page's session: a queue of suggested pool texts, labels given (undoable), and the AUC curve.

Kept out of the page script so keyboard callbacks and buttons run the same code. Suggestions are claimed for
the person (colleagues get other texts; a reload brings these back first), a skip releases one, and every
label is stored at once through `POST …/pool/{id}/label`, which the service routes by the model's state at
that moment (a sample of a draft, else buffered feedback for the next version, also while a run is in
flight), so a key press is never refused because a colleague started a training. A label costs one
request (and a suggestion request when the queue runs out), never a read of the stored samples: the curve's
next point is computed only when asked for (`update_curve`), by `core.engine.label_curve`, from embeddings
the workbench's sample cache keeps for the process.

A key press is bound to the text it was pressed on (docs/workbench-labelling.md): a `Press` carries what was
shown when the key went down, and `accept` drops a press whose text is not the one shown now (it is never
applied to another text) and a press delivered again (a component's value re-sent on a rerun). Moving a
control (mode, overlap) re-tunes the queue after the text shown and keeps the session's labels and counters.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, TypedDict

import numpy as np

from app.labelling.campaign import where_it_went
from app.labelling.labels import retrain_at
from app.ui.retry import worth_retrying
from core.client import (
    ApiError,
    AuthenticationError,
    Client,
    ConflictError,
    Model,
    NotFoundError,
    Suggestion,
    Suggestions,
    Trait,
)
from core.contract import MAX_SCALE_POINTS, scale_quality
from core.json_types import JsonObject

if TYPE_CHECKING:  # the embedders and the engine bring in scikit-learn: imported when a point is asked for
    from core.embedders.base import Embedder

BATCH = 20  # suggestions fetched at a time
#: The keys of a scale's points, 1..N (a pole trait's labels are the first two).
POINT_KEYS = tuple(str(k) for k in range(1, MAX_SCALE_POINTS + 1))
#: Keys that act on the text shown (label, skip, unsure): a press of one is dropped unless that text is shown.
ON_TEXT = frozenset({*POINT_KEYS, "0", "?"})
PREFETCH_AT = 5  # queued texts left when the next suggestions are fetched in the background
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="label-suggest")  # shared by sessions
NEGATIVE, POSITIVE = 0.0, 1.0


class Queued(TypedDict):
    """A suggested text in the queue (`core.client.Suggestion`'s fields)."""

    id: int  # the pool text's id
    text: str
    score: float | None  # the draft fit's score, None before both poles have labels
    overlap: bool  # a text a colleague labelled
    claimed_until: datetime | None
    metadata: JsonObject | None  # the extra columns kept beside the text


def as_queued(item: Suggestion) -> Queued:
    return Queued(
        id=item.id,
        text=item.text,
        score=item.score,
        overlap=item.overlap,
        claimed_until=item.claimed_until,
        metadata=item.metadata,
    )


class Given(TypedDict):
    """A label this session sent as feedback (a ready model): the curve counts it with the stored samples."""

    trait: str
    text: str
    quality: float


class Labelled(TypedDict):
    """A label of this session, as undo needs it: the text, and where the service stored it."""

    item: Queued
    quality: float
    route: Literal["samples", "feedback"]
    ids: list[int]  # the stored sample's id (route "samples")
    feedback_id: int | None  # the buffered label's id (route "feedback")
    done: bool  # the label gave its text the votes wanted: it left the texts still to label


@dataclass(frozen=True)
class Press:
    """One key press (or button click): the key, what was shown when it went down (`shown_as`), and the
    press's own id (`nonce`: one per physical press; None for a button, which Streamlit delivers once)."""

    key: str
    shown: str | None
    nonce: str | None = None


def shown_as(trait: str, item: Queued | None) -> str | None:
    """What a press names as shown: the trait and the text's pool id (the page writes it into the text's
    element, where the key listener reads it)."""
    return None if item is None else f"{trait}:{item['id']}"


@dataclass(frozen=True)
class Failure:
    """A request of the session that failed: what it was doing (`what`, "Storing that label") and why. The
    page shows it with a way to try again; a failed suggestion is asked for again by itself (`poll`)."""

    what: str
    exc: Exception

    @property
    def suggesting(self) -> bool:
        return self.what == SUGGESTING


SUGGESTING = "Fetching suggestions"


@dataclass(frozen=True)
class Answer:
    """Suggestions as they came, and this session's labels when they were asked for and when they came: a
    label given in between may or may not be in the answer's count of the texts left."""

    got: Suggestions
    asked: int
    labelled: int  # -1: a label was on its way at one end (`_suggest`)


@dataclass
class LabelSession:
    handle: str
    trait: str
    mode: str = "auto"
    overlap: float | None = (
        None  # the share of suggestions from texts a colleague labelled; None: the model's
    )
    queue: list[Queued] = field(default_factory=list)
    pos: int = 0
    history: list[Labelled] = field(default_factory=list)
    # When the session started: its count is the service's count of the person's labels since then (a page
    # switch or a reload keeps it; another trait or model starts a session of its own). To the microsecond:
    # cut to the second, it counted labels given earlier in that second (a draft's import just before).
    since: datetime = field(default_factory=lambda: datetime.now(UTC))
    curve: list[tuple[int, float]] = field(default_factory=list)  # (labels given, out-of-fold AUC)
    given: list[Given] = field(default_factory=list)
    message: str = ""
    failure: Failure | None = None  # the last request that failed, until the next press or retry
    exhausted: bool = False
    pending: Future[Answer] | None = None  # the next suggestions, being fetched in the background
    unlabelled: int | None = None  # pool texts wanting votes for the trait in the last suggestions' answer
    labelled_then: int = 0  # this session's labels when that answer came (each label since is one fewer)
    labelling: bool = False  # a label's request is on its way: stored or not, it is not in `history` yet
    held_by_others: int = 0  # of those, the texts colleagues' live claims held in that answer
    skipped: set[int] = field(default_factory=set)  # pool ids skipped: not queued again in this session
    signed_out: str | None = None  # the service no longer takes the person's sign-in: why (a press was lost)
    campaign: tuple[object, ...] | None = None  # the overlap and votes wanted the queue was asked under
    pool_seen: int | None = None  # the pool's size when the queue last ran out (`poll`)
    annotator: str | None = (
        None  # who this key labels as: undo withdraws this one's label, never a colleague's
    )
    presses: set[str] = field(default_factory=set)  # the nonces of the presses taken (kept across sessions)
    points: int | None = None  # the trait's scale: keys 1..points label; None: keys 1 and 2, its poles
    reviewer: bool = True  # the person may review: their labels are accepted as given, never proposals

    @property
    def left(self) -> int | None:
        """Pool texts still to label for the trait, as the last suggestions' answer counted them (so a
        campaign change or texts added to the pool show at the next answer): each label of this session
        since that gave its text the votes wanted is one fewer (with one vote wanted, every label; with more,
        a first vote leaves its text wanting), each undo of an earlier label one more."""
        if self.unlabelled is None:
            return None
        since = sum(h["done"] for h in self.history[self.labelled_then :])
        undone = max(self.labelled_then - len(self.history), 0)
        return max(self.unlabelled - since + undone, 0)

    @property
    def error(self) -> str:
        """The failure in a line ("" when none)."""
        return "" if self.failure is None else f"{self.failure.what} failed: {self.failure.exc}"

    @property
    def current(self) -> Queued | None:
        return self.queue[self.pos] if 0 <= self.pos < len(self.queue) else None


def refill(s: LabelSession, client: Client) -> None:
    """Fetch suggestions when the queue has run out (texts already queued or labelled are not added twice),
    and start fetching the next ones in the background while `PREFETCH_AT` texts are still queued: the service
    takes seconds to suggest from a large pool, and the key press that empties the queue should not wait."""
    if s.current is None:
        prefetched, s.pending = s.pending, None
        answer = prefetched.result() if prefetched is not None else _suggest(s, client)
        fresh = _unseen(s, answer.got)
        if not fresh and prefetched is not None:  # asked before the last labels: ask again, now
            answer = _suggest(s, client)
            fresh = _unseen(s, answer.got)
        counted(s, answer)
        back = {item["id"] for item in fresh}  # passed over with → and handed back: queued again, at the end
        s.queue = [item for item in s.queue[: s.pos] if item["id"] not in back]
        s.pos = len(s.queue)
        s.queue += fresh
        s.exhausted = not fresh
        if not fresh:
            s.message = exhausted_note(s)
    if not s.exhausted and s.pending is None and len(s.queue) - s.pos <= PREFETCH_AT:
        s.pending = _BACKGROUND.submit(_suggest, s, client)


def counted(s: LabelSession, answer: Answer) -> None:
    """What an answer says is left: the count the page shows follows it (new pool texts, votes wanted)."""
    exact = answer.asked == answer.labelled or s.unlabelled is None  # else the last exact count stands
    if answer.got.unlabelled is not None and exact:
        s.unlabelled, s.labelled_then = answer.got.unlabelled, answer.labelled
    s.held_by_others = answer.got.held_by_others


def exhausted_note(s: LabelSession) -> str:
    """Why no text is queued although some are left, in the person's words: colleagues are named only when
    the service counts texts their live claims hold; texts this session skipped are not offered again."""
    left = s.left or 0
    if not left:
        return ""
    if s.held_by_others:
        return (
            f"{s.held_by_others:,} of the texts left are held by colleagues for now; press → to ask again "
            "(this page also asks by itself)."
        )
    if s.skipped:
        return f"The {left:,} text(s) left are ones you skipped in this session; press ← to go back to them."
    return f"{left:,} text(s) left could not be suggested just now; press → to ask again."


def poll(s: LabelSession, client: Client, pool_size: int) -> bool:
    """With nothing queued: ask again when something may have changed (texts added to the pool, texts left
    that colleagues held or that could not be suggested) or when the last suggestions failed; True when
    texts came."""
    if s.current is not None or s.signed_out or s.pending is not None:
        return False
    if s.failure is not None:
        if not s.failure.suggesting or not worth_retrying(s.failure.exc):
            return False  # a press that failed, or a refusal the same request would meet: the person decides
    elif not s.left and pool_size == s.pool_seen:
        return False  # the pool is done and the same: no suggestion asked for
    s.pool_seen = pool_size
    try_again(s, client)
    return s.current is not None


def try_again(s: LabelSession, client: Client) -> None:
    """Ask for suggestions again after a failure (the page's *Try again*, or `poll` by itself): the failure
    goes, and a new one takes its place if the service still fails."""
    s.failure, s.exhausted = None, False
    try:
        refill(s, client)
    except AuthenticationError as exc:
        s.signed_out = str(exc)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        s.failure = Failure(SUGGESTING, exc)


def start(s: LabelSession, client: Client) -> None:
    """Ask for a new session's first suggestions in the background: the page paints at once (suggesting
    from a large pool takes the service seconds), and shows them when `first_suggestions_ready` says so."""
    if s.current is None and s.pending is None and not s.exhausted:
        s.pending = _BACKGROUND.submit(_suggest, s, client)


def first_suggestions_ready(s: LabelSession, client: Client) -> bool:
    """False while the first suggestions are still on their way; once they have come, queue them (a failure
    is kept in `s.failure`, as a key press's would be, and asked again by `poll`)."""
    if s.current is not None or s.pending is None:
        return True
    if not s.pending.done():
        return False
    try:
        refill(s, client)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        s.failure = Failure(SUGGESTING, exc)
    return True


def _suggest(s: LabelSession, client: Client) -> Answer:
    asked, during = len(s.history), s.labelling
    got = client.suggest(s.handle, s.trait, k=BATCH, mode=s.mode, overlap=s.overlap, claim=True)
    # A label on its way when the suggestions were asked for or came may be in their count or not (the
    # service may store it before it counts, and its answer be read after this one): never an exact count.
    labelled = -1 if during or s.labelling else len(s.history)
    return Answer(got, asked, labelled)


def _unseen(s: LabelSession, got: Suggestions) -> list[Queued]:
    """The answer's texts not queued ahead, labelled or skipped in this session. A text passed over with →
    is the person's still (claimed): the service hands it back, and it is queued again rather than counted
    as left and never shown."""
    seen = {item["id"] for item in s.queue[s.pos :]} | {h["item"]["id"] for h in s.history} | s.skipped
    return [as_queued(item) for item in got.items if item.id not in seen]


def update_curve(s: LabelSession, client: Client, embedder: Embedder) -> float | None:
    """Add the curve's point for the labels given so far: the out-of-fold ROC-AUC of every label of the trait
    (stored samples, and feedback sent this session). None (no point) until each pole has 2 labels."""
    from core.engine.label_curve import out_of_fold_auc

    rows = [(x.text, x.quality) for x in client.list_samples(s.handle, trait=s.trait, page_size=500)]
    rows += [(g["text"], g["quality"]) for g in s.given]
    if not rows:
        return None
    X = np.asarray(embedder.encode([r[0] for r in rows]), dtype=np.float64)
    auc = out_of_fold_auc(X, np.asarray([r[1] for r in rows], dtype=np.float64))
    if auc is not None:
        point = (len(s.history), auc)
        s.curve = [p for p in s.curve if p[0] != point[0]] + [point]  # one point per label count
    return auc


def label_keys(trait: Trait) -> list[tuple[str, str]]:
    """The keys that label `trait` with what each means: its scale's points 1..N with their words, else `1`
    its negative pole and `2` its positive one."""
    if trait.scale is not None:
        return [(str(k), trait.point_name(k)) for k in range(1, trait.scale.points + 1)]
    return [("1", f"1 · {trait.negative_label}"), ("2", f"2 · {trait.positive_label}")]


def act(s: LabelSession, key: str, client: Client, model: Model) -> None:
    """One keyboard key (or its button): `1` negative, `2` positive (on a scale `1`..`N` its points), `0`
    skip, `u` undo, arrows move; then the queue is refilled (a failure of either is kept in `s.failure`,
    named for what failed: a label stored whose next suggestions failed is not said to be lost)."""
    s.failure = None
    what = doing(key)
    try:
        if s.points is not None and key in POINT_KEYS[: s.points]:
            _label(s, scale_quality(int(key), s.points), client, model, point=int(key))
        elif s.points is None and key in ("1", "2"):
            _label(s, POSITIVE if key == "2" else NEGATIVE, client, model)
        elif key == "0":
            if s.current is not None:
                _release(s, client, s.current)
                s.skipped.add(int(s.current["id"]))
                s.pos += 1
                s.message = "Skipped."
        elif key == "u":
            _undo(s, client)
        elif key == "ArrowLeft":
            s.pos = max(0, s.pos - 1)
        elif key == "ArrowRight":
            s.pos = min(len(s.queue), s.pos + 1)
        what = SUGGESTING
        refill(s, client)
    except AuthenticationError as exc:  # signed out (another tab, idle): the page says so and what was lost
        s.signed_out = str(exc)
        s.message = lost(key) if what != SUGGESTING else ""
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        s.failure = Failure(what, exc)


def doing(key: str) -> str:
    """What a press asks of the service, as its failure names it."""
    if key in ON_TEXT:
        return "Skipping the text" if key == "0" else "Storing that label"
    return "Undoing the last label" if key == "u" else SUGGESTING


def lost(key: str) -> str:
    """What a press that failed did not do: a label or a note is said to be not stored."""
    return "That label was not stored." if key in ON_TEXT else ""


def accept(s: LabelSession, press: Press) -> bool:
    """Whether to act on `press`: False for a press taken already (the same nonce) and for a key on a text
    (`ON_TEXT`) whose text is not the one shown now: such a press is dropped, never applied to another
    text."""
    if press.nonce is not None:
        if press.nonce in s.presses:
            return False
        s.presses.add(press.nonce)
    if press.key in ON_TEXT and press.shown != shown_as(s.trait, s.current):
        if press.shown is not None:
            s.failure = None
            s.message = "That key was pressed on a text no longer shown: nothing was stored. Press it again."
        return False
    return True


def retune(s: LabelSession, client: Client, mode: str, overlap: float | None) -> None:
    """Another suggestion mode or overlap: the text shown stays (a key pressed on it still counts), the
    texts queued after it go back to the colleagues, and the next suggestions follow the new settings. The
    labels of the session, and its counters, stay."""
    if (s.mode, s.overlap) == (mode, overlap):
        return
    s.mode, s.overlap = mode, overlap
    requeue(s, client)


def follow(s: LabelSession, client: Client, campaign: tuple[object, ...]) -> None:
    """The owner changed the campaign (overlap, votes wanted, a pause, a version) while the page was open:
    the texts queued after the one shown were asked for under the old one, so they go back and the next
    suggestions follow the new one."""
    if s.campaign is not None and s.campaign != campaign:
        requeue(s, client)
    s.campaign = campaign


def requeue(s: LabelSession, client: Client) -> None:
    """The text shown stays (a key pressed on it still counts), the texts queued after it go back to the
    colleagues, and the next suggestions are asked for afresh."""
    for item in s.queue[s.pos + 1 :]:
        with contextlib.suppress(ApiError):
            _release(s, client, item)
    s.queue = s.queue[: s.pos + 1]
    stale, s.pending = s.pending, None
    if stale is not None:  # suggested under the old settings, and claimed: handed back once they come
        stale.add_done_callback(lambda done: _release_suggested(s, client, done))
    s.exhausted = False
    if s.current is None:  # still waiting for the first suggestions: asked again in the background
        start(s, client)
    else:
        refill(s, client)


def _release_suggested(s: LabelSession, client: Client, done: Future[Answer]) -> None:
    if done.exception() is not None:
        return
    queued = {item["id"] for item in list(s.queue)}
    for item in done.result().got.items:
        if item.id not in queued:
            with contextlib.suppress(ApiError):
                _release(s, client, as_queued(item))


def withdrawn(s: LabelSession, label_id: int, kind: str = "feedback") -> None:
    """A label of this session withdrawn (`kind` `feedback`: from the buffered-feedback list; `sample`: from
    "My labels"): it no longer counts as labelled, and undo no longer reaches it."""
    for i, h in enumerate(s.history):
        if (h["feedback_id"] == label_id) if kind == "feedback" else (label_id in h["ids"]):
            label = Given(trait=s.trait, text=h["item"]["text"], quality=h["quality"])
            if label in s.given:
                s.given.remove(label)
            del s.history[i]
            if s.curve and s.curve[-1][0] > len(s.history):
                s.curve.pop()
            return


def abandon(s: LabelSession, client: Client) -> None:
    """A session replaced (another trait, mode or overlap): its queued texts go back to the colleagues, so
    the next session's suggestions are the new settings' own, not the old claims handed back first."""
    for item in s.queue[s.pos :]:
        with contextlib.suppress(ApiError):
            _release(s, client, item)


def _release(s: LabelSession, client: Client, item: Queued) -> None:
    """A skipped text goes back to the colleagues at once (its claim released); a text deleted meanwhile
    has no claim left to release."""
    with contextlib.suppress(NotFoundError):
        client.release_claim(s.handle, int(item["id"]), s.trait)


def _label(s: LabelSession, quality: float, client: Client, model: Model, point: int | None = None) -> None:
    """Store a label of the text shown: a pole's `quality`, or on a scale its `point` (of that quality);
    suggestions fetched in the background meanwhile know it is on its way (`_suggest`)."""
    s.labelling = True
    try:
        _store_label(s, quality, client, model, point)
    finally:
        s.labelling = False


#: A label the service refuses for the text itself, by error code: what the page says as it shows the next.
REFUSED = {
    # Its votes, counting colleagues who hold it, are all there.
    "pool_text_taken": "That label was not stored: the text already has the votes it wants, from colleagues "
    "who labelled it or are labelling it now. Here is the next.",
    # The evaluation set took the text after this queue was fetched.
    "pool_text_in_evaluation_set": "That label was not stored: the text is in the evaluation set now, which "
    "is never labelled nor trained on. Here is the next.",
}


def _store_label(s: LabelSession, quality: float, client: Client, model: Model, point: int | None) -> None:
    item = s.current
    if item is None:
        return
    try:
        if point is None:
            out = client.label_pool_text(s.handle, int(item["id"]), s.trait, quality)
        else:
            out = client.label_pool_text(s.handle, int(item["id"]), s.trait, point=point)
    except ConflictError as exc:
        if exc.code not in REFUSED:
            raise
        s.queue.pop(s.pos)  # not to be labelled (any more): the next text
        s.message = REFUSED[exc.code]
        return
    done = out.votes >= out.votes_wanted
    if out.stored_as == "sample":
        s.history.append(
            Labelled(item=item, quality=quality, route="samples", ids=[out.id], feedback_id=None, done=done)
        )
    else:
        s.given.append(Given(trait=s.trait, text=item["text"], quality=quality))
        s.history.append(
            Labelled(item=item, quality=quality, route="feedback", ids=[], feedback_id=out.id, done=done)
        )
    s.queue.pop(s.pos)
    proposal = model.review and not s.reviewer
    s.message = where_it_went(out, retrain_at(client, s.handle), model.auto_retrain, proposal)


def _undo(s: LabelSession, client: Client) -> None:
    if not s.history:
        s.message = "Nothing to undo."
        return
    last = s.history[-1]
    # Named by its text, never by the id the label route answered: a gold item's answer has an id of its own,
    # which as a sample's or a buffered label's would name another row.
    try:
        client.withdraw_pool_label(s.handle, int(last["item"]["id"]), s.trait)
    except NotFoundError:
        s.message = "That label has been trained on already (a training took it in): it stays."
        return
    except ApiError as exc:  # trained into a version (409 label_trained), or a training reading it now
        s.message = f"The label was not withdrawn: {exc.message}"
        return
    if last["feedback_id"] is not None:
        label = Given(trait=s.trait, text=last["item"]["text"], quality=last["quality"])
        if label in s.given:
            s.given.remove(label)
    s.history.pop()
    s.queue.insert(s.pos, last["item"])
    if s.curve and s.curve[-1][0] > len(s.history):
        s.curve.pop()
    s.message = (
        "Undone: the feedback label was withdrawn before a training took it."
        if last["route"] == "feedback"
        else "Undone: the label was removed."
    )
