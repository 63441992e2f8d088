"""The Label page's session: what it holds (the queue of suggested pool texts, the labels given, the AUC
curve) and the records it keeps of them.

Kept out of the page script so keyboard callbacks and buttons run the same code: the queue's requests are
app/labelling/suggestion_queue.py's, a key press's app/labelling/key_presses.py's, and storing, undoing and
withdrawing a label app/labelling/labels_given.py's.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypedDict

from core.client import Suggestion, Suggestions
from core.json_types import JsonObject


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
