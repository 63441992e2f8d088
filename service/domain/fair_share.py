"""Scoring's share of the cores: work-conserving fair queuing of score pieces by what they cost.

A score request's texts are scored in pieces (`pieces`) of about `PIECE_S` of the embedder's work (fewer
tokens for a costlier embedder, at most `PIECE_COST`). Each piece waits for a turn here before it goes to
the embedder; `slots` pieces (one per scoring thread, i.e. per core) run at once. Turns go by start-time fair
queuing: a caller's pieces are tagged in the order it sends them, each tag the caller's previous one plus
the piece's cost (never behind the piece being served), and the free slot goes to the lowest tag. So:

- a caller alone gets every slot the moment it asks (no slot idles while a piece waits: work-conserving);
- callers that all wait get the cores in proportion to their pieces' costs, whatever their requests'
  shapes: a caller sending eight requests at once is one caller with eight pieces queued;
- a caller arriving beside a busy one is served at the next free slot (its tag is the current one), so it
  waits at most one piece of another caller's, not the other's queue.

The cost is texts and tokens, not characters: every text pays `TEXT_COST` (tokenising, the row's padding and
Python's work per row; 100 five-character texts cost what 100 texts cost, not what 500 characters do) plus
its tokens after the embedder's window cut (estimated at `CHARS_PER_TOKEN`: a 99,000-character text costs its
window, not its length).

Admission bounds each caller's work in flight: a request whose cost would take its caller past
`caller_cost` is refused (429, retryable) only while another caller has work in flight too; alone, a caller
is never refused. A stop (SIGTERM) wakes every waiting piece with `Stopped`: the request answers 503
`shutting_down` at once, the pieces running finish (a piece is tens of milliseconds).
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

#: A text's fixed cost, in tokens: what a row costs beyond its tokens (tokenising, padding, the row's
#: Python). Tiny texts are charged this, so a hundred of them are never nearly free.
TEXT_COST = 16
#: Characters a token stands for in the estimate (English and most Latin-script text: about 4).
CHARS_PER_TOKEN = 4
#: The longest window of an embedder (e5-small, mpnet-base: 512 tokens; MiniLM's 256 is under it): a text is
#: cut to its window before it is encoded, so no text costs more.
WINDOW_TOKENS = 512
#: A piece's cost at most (a text is never split, so one text may exceed it alone): about one window, tens
#: of milliseconds of one core with MiniLM. A colleague's piece waits at most one such piece: twice this
#: (1,024) left a colleague 1.4 times as long beside a load, for no gain in a caller's own throughput
#: (benchmarks/score_fairness.py).
PIECE_COST = 512
#: A piece's time, about: pieces of an embedder whose tokens cost more (the blend: e5-small and mpnet-base)
#: hold fewer tokens, as its pieces have taken so far (`PieceTimes`), so a colleague's one text waits for
#: about this long whatever the embedder, not for 512 of the blend's tokens (eight times its own text).
PIECE_S = 0.03
#: A piece's cost at least: a text's fixed cost and a short sentence's tokens.
MIN_PIECE_COST = 64
#: How often a waiting piece asks whether its request is still wanted (a client that left): a poll, since
#: a disconnect is seen only by asking.
POLL_S = 0.5

#: Asked while a piece waits: raises when the request is no longer wanted.
StillWanted = Callable[[], None]
T = TypeVar("T")


def text_cost(text: str) -> int:
    """What scoring `text` costs, in tokens: its fixed cost and its tokens after the window cut."""
    return length_cost(len(text))


def length_cost(chars: int) -> int:
    """What scoring a text of `chars` characters costs (`text_cost`)."""
    return TEXT_COST + min(math.ceil(chars / CHARS_PER_TOKEN), WINDOW_TOKENS)


def cost_of(texts: list[str]) -> int:
    return sum(map(text_cost, texts))


def pieces(texts: list[str], budget: int = PIECE_COST) -> list[list[str]]:
    """`texts` in order, in consecutive runs costing about `budget` (at least one text each)."""
    out: list[list[str]] = []
    run: list[str] = []
    size = 0
    for text in texts:
        cost = text_cost(text)
        if run and size + cost > budget:
            out.append(run)
            run, size = [], 0
        run.append(text)
        size += cost
    if run:
        out.append(run)
    return out


class Stopped(Exception):
    """The process is stopping: a waiting piece is not scored."""


class Busy(Exception):
    """Admission refused: the caller's work in flight is at its bound while others have work too."""

    def __init__(self, in_flight: int, bound: int) -> None:
        super().__init__(f"{in_flight} in flight, bound {bound}")
        self.in_flight, self.bound = in_flight, bound


@dataclass(order=True)
class Ticket:
    """A piece waiting for a turn; ordered by its start tag, ties by arrival. Not the cheaper first: callers
    with nothing queued before (an app scoring one text at a time) all start at the current tag, and among
    them the cheapest first passed a long text over for as long as shorter ones kept arriving (seconds under
    a steady load)."""

    start: float
    seq: int
    finish: float = field(compare=False)
    caller: str = field(compare=False)
    cost: int = field(compare=False)
    granted: bool = field(default=False, compare=False)
    dropped: bool = field(default=False, compare=False)


class Queue:
    """The decisions alone, without threads (tests drive them): tickets arrive, `take` says which is next."""

    def __init__(self) -> None:
        self.vtime = 0.0  # the start tag of the piece last given a turn
        self._finish: dict[str, float] = {}  # each caller's last tag
        self._heap: list[Ticket] = []
        self._seq = itertools.count()

    def arrive(self, caller: str, cost: int) -> Ticket:
        start = max(self.vtime, self._finish.get(caller, 0.0))
        ticket = Ticket(start, next(self._seq), start + cost, caller, cost)
        self._finish[caller] = ticket.finish
        heapq.heappush(self._heap, ticket)
        return ticket

    def take(self) -> Ticket | None:
        """The waiting ticket with the lowest tag (given its turn), or None when none waits."""
        while self._heap:
            ticket = heapq.heappop(self._heap)
            if ticket.dropped:
                continue
            ticket.granted = True
            self.vtime = max(self.vtime, ticket.start)
            return ticket
        return None

    def drop(self, ticket: Ticket) -> None:
        """A waiting ticket no one wants any more (its request ended)."""
        ticket.dropped = True

    def waiting(self) -> int:
        return sum(not t.dropped for t in self._heap)

    def forget_idle(self, busy: set[str]) -> None:
        """Drop the tags of callers with nothing in flight (an idle caller keeps no credit nor debt)."""
        for caller in [c for c in self._finish if c not in busy]:
            del self._finish[caller]


class PieceTimes:
    """Seconds a token of cost has taken per embedder, a moving average of its pieces (cache hits make it
    cheaper, as they make pieces shorter); the budget of its next piece."""

    WEIGHT = 0.2  # of the latest piece

    def __init__(self) -> None:
        self._per_cost: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, embedder: str, cost: int, seconds: float) -> None:
        with self._lock:
            seen = self._per_cost.get(embedder)
            now = seconds / max(cost, 1)
            self._per_cost[embedder] = now if seen is None else seen + self.WEIGHT * (now - seen)

    def budget(self, embedder: str, most: int) -> int:
        """A piece's cost: about PIECE_S of `embedder`'s work, between MIN_PIECE_COST and `most`."""
        with self._lock:
            per_cost = self._per_cost.get(embedder)
        if not per_cost:
            return most
        return min(most, max(MIN_PIECE_COST, int(PIECE_S / per_cost)))


class FairShare:
    """One per API process. `slots` pieces run at once; 0: no turns (every piece runs at once)."""

    def __init__(self, slots: int, caller_cost: int = 0, poll_s: float = POLL_S) -> None:
        self.slots = slots
        self.caller_cost = caller_cost  # 0: no bound on a caller's work in flight
        self.poll_s = poll_s
        self._queue = Queue()
        self._cond = threading.Condition()
        self._running = 0
        self._in_flight: dict[str, int] = {}  # admitted cost per caller, until its request ends
        self._stopped = False
        self.times = PieceTimes()

    def describe(self) -> str:
        if self.slots <= 0:
            return "scoring fair share: off"
        bound = f"{self.caller_cost:,} tokens in flight per caller" if self.caller_cost else "no bound"
        return f"scoring fair share: {self.slots} pieces at once, by cost; {bound} while others wait"

    @contextmanager
    def admitted(self, caller: str, cost: int) -> Iterator[None]:
        """Count a request's cost as its caller's work in flight while it runs; `Busy` when that would pass
        the bound while another caller has work in flight (never for a caller alone)."""
        with self._cond:
            mine = self._in_flight.get(caller, 0)
            others = any(n > 0 for c, n in self._in_flight.items() if c != caller)
            if self.caller_cost and others and mine > 0 and mine + cost > self.caller_cost:
                raise Busy(mine, self.caller_cost)
            self._in_flight[caller] = mine + cost
        try:
            yield
        finally:
            with self._cond:
                left = self._in_flight[caller] - cost
                if left > 0:
                    self._in_flight[caller] = left
                else:
                    del self._in_flight[caller]
                    self._queue.forget_idle(set(self._in_flight))

    @contextmanager
    def turn(self, caller: str, cost: int, still_wanted: StillWanted = lambda: None) -> Iterator[None]:
        """Wait for this piece's turn (asking `still_wanted` while waiting), run the block, free the slot."""
        if self.slots <= 0:
            if self._stopped:
                raise Stopped
            yield
            return
        with self._cond:
            if self._stopped:
                raise Stopped
            ticket = self._queue.arrive(caller, cost)
            self._grant()
            try:
                while not ticket.granted:
                    self._cond.wait(self.poll_s)
                    if ticket.granted:
                        break
                    if self._stopped:
                        raise Stopped
                    self._cond.release()  # still_wanted may ask the event loop: never with the lock held
                    try:
                        still_wanted()
                    finally:
                        self._cond.acquire()
            except BaseException:
                if ticket.granted:  # granted while it asked: hand the slot on
                    self._running -= 1
                    self._grant()
                else:
                    self._queue.drop(ticket)
                raise
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._grant()

    def in_turns(
        self,
        caller: str,
        texts: list[str],
        work: Callable[[list[str]], T],
        still_wanted: StillWanted,
        embedder: str = "",
    ) -> Iterator[T]:
        """`work` on `texts` piece by piece, each piece in its caller's turn, `still_wanted` asked between
        pieces and while one waits: how scoring, and what a suggestion embeds itself, share the cores.
        Pieces are about `PIECE_S` of `embedder`'s work (at most PIECE_COST, read at each call: tests
        lower it)."""
        rest = texts
        first = True
        while rest:
            if not first:
                still_wanted()
            first = False
            piece = pieces(rest, self.times.budget(embedder, PIECE_COST))[0]
            rest = rest[len(piece) :]
            cost = cost_of(piece)
            with self.turn(caller, cost, still_wanted):
                started = time.perf_counter()
                out = work(piece)
                self.times.add(embedder, cost, time.perf_counter() - started)
            yield out

    def _grant(self) -> None:
        """Give free slots to the lowest tags (the lock held)."""
        woke = False
        while self._running < self.slots and self._queue.take() is not None:
            self._running += 1
            woke = True
        if woke:
            self._cond.notify_all()

    def others_busy(self, caller: str) -> bool:
        """Whether a caller other than `caller` has scoring in flight (a request rate is then enforced)."""
        with self._cond:
            return any(c != caller for c in self._in_flight)

    def stop(self) -> None:
        """The process is stopping: every waiting piece raises `Stopped`, none starts after."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def state(self) -> tuple[int, int]:
        """(pieces running, pieces waiting): what a test waits on (nothing outside shows a piece waiting)."""
        with self._cond:
            return self._running, self._queue.waiting()
