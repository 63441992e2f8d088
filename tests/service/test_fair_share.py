"""Scoring's fair share (service/domain/fair_share.py), driven through its decisions: which piece gets the
next turn, who is admitted, what a stop does. No clock: threads wait on the share's own state."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from service.domain.fair_share import (
    MIN_PIECE_COST,
    PIECE_COST,
    PIECE_S,
    TEXT_COST,
    WINDOW_TOKENS,
    Busy,
    FairShare,
    Queue,
    Stopped,
    cost_of,
    text_cost,
)


def _until(check: Callable[[], bool]) -> None:
    """Wait for another thread to reach a state of the share (never for time to pass)."""
    done = threading.Event()
    while not check():
        done.wait(0.001)


def test_a_text_costs_its_texts_and_tokens_not_its_characters() -> None:
    """Tiny texts pay the per-text cost (100 five-character texts cost 36 times their 500 characters' tokens
    alone), and a huge text costs its window, not its length."""
    assert text_cost("hello") == TEXT_COST + 2
    assert cost_of(["hello"] * 100) == 100 * (TEXT_COST + 2)
    assert text_cost("x" * 99_000) == TEXT_COST + WINDOW_TOKENS
    assert text_cost("x" * 99_000) < 10 * text_cost("x" * 200)


def test_a_caller_alone_gets_every_slot_at_once() -> None:
    """Work-conserving: with nobody else, a caller's pieces run on every slot without waiting."""
    share = FairShare(slots=2)
    with share.turn("alone", 500), share.turn("alone", 500):
        assert share.state() == (2, 0)
    assert share.state() == (0, 0)


def test_the_next_turn_goes_by_cost_not_by_requests() -> None:
    """A caller with many pieces queued (eight requests of tiny texts) and one sending a single piece: the
    newcomer is served at the next turn. Both kept busy, each gets the turns its costs earn: a caller whose
    pieces cost three times as much gets a third as many turns."""
    q = Queue()
    for _ in range(8):
        q.arrive("tiny", 1_800)
    first = q.take()
    assert first is not None and first.caller == "tiny"
    q.arrive("colleague", 50)
    nxt = q.take()
    assert nxt is not None and nxt.caller == "colleague"

    q = Queue()
    served = {"cheap": 0, "dear": 0}
    q.arrive("cheap", 100)
    q.arrive("dear", 300)
    for _ in range(400):
        t = q.take()
        assert t is not None
        served[t.caller] += t.cost
        q.arrive(t.caller, t.cost)  # a busy caller sends its next piece as soon as one is taken
    assert abs(served["cheap"] - served["dear"]) <= 300  # equal work, within one piece


def test_callers_at_the_same_tag_take_turns_in_arrival_order() -> None:
    """Callers with nothing queued before (apps scoring one text a request) all start at the current tag:
    among them turns go by arrival, so a long text is served after the texts that came before it, not
    passed over by every shorter one that arrives after it while the load lasts."""
    q = Queue()
    for i in range(4):
        q.arrive(f"short{i}", 40)
    q.arrive("long", 400)
    taken: list[str] = []
    for i in range(50):
        t = q.take()
        assert t is not None
        taken.append(t.caller)
        if t.caller == "long":
            break
        q.arrive(f"next{i}", 40)  # a new caller's short text arrives at every turn
    assert taken == ["short0", "short1", "short2", "short3", "long"]


def test_an_idle_caller_keeps_no_credit() -> None:
    """A caller that scored nothing for a while is not owed the time it was away: its next piece starts at
    the current tag, not at its last one, so it cannot take several turns in a row on coming back."""
    q = Queue()
    q.arrive("back", 100)
    for _ in range(6):
        q.arrive("busy", 100)
    taken = [t.caller for t in iter(q.take, None)]
    assert taken[:2] == ["back", "busy"] or taken[:2] == ["busy", "back"]
    for _ in range(4):
        q.arrive("busy", 100)
    q.take()
    ticket = q.arrive("back", 100)
    assert ticket.start == q.vtime > 100


def test_turns_in_threads_let_a_colleague_in_after_one_piece() -> None:
    """One slot, held by a piece of the heavy caller, three more of its pieces waiting: a colleague's piece
    arriving after them is the next to run."""
    share = FairShare(slots=1)
    ran: list[str] = []  # one slot: pieces run one at a time, in the order of their turns

    def piece(caller: str) -> None:
        with share.turn(caller, 1_000):
            ran.append(caller)

    with share.turn("heavy", 1_000):
        ran.append("heavy")
        threads = []
        for n, caller in enumerate(["heavy", "heavy", "heavy", "colleague"], start=1):
            t = threading.Thread(target=piece, args=(caller,))
            t.start()
            threads.append(t)
            _until(lambda n=n: share.state()[1] == n)  # type: ignore[misc]  # arrived, in this order
    for t in threads:
        t.join(60)
    assert ran == ["heavy", "colleague", "heavy", "heavy", "heavy"]


def test_admission_bounds_a_caller_only_beside_others() -> None:
    """A caller alone is admitted whatever its work in flight; beside another caller's work, a request that
    takes it past its bound is refused (its first one never is), and admitted again once it has room."""
    share = FairShare(slots=2, caller_cost=1_000)
    heavy = [share.admitted("heavy", 900) for _ in range(3)]
    with heavy[0], heavy[1], heavy[2], share.admitted("colleague", 20):
        with pytest.raises(Busy) as refused, share.admitted("heavy", 200):
            pass
        assert refused.value.in_flight == 2_700 and refused.value.bound == 1_000
    with share.admitted("colleague", 20), share.admitted("heavy", 5_000):  # a first request always passes
        assert share.others_busy("heavy") and share.others_busy("colleague")
    assert not share.others_busy("heavy")


def test_a_stop_answers_every_waiting_piece_at_once() -> None:
    """On a stop, pieces waiting for a turn raise `Stopped` without running (the request answers 503), the
    piece running finishes, and no piece starts after."""
    share = FairShare(slots=1)
    outcomes: list[str] = []

    def waiting() -> None:
        try:
            with share.turn("other", 10):
                outcomes.append("ran")
        except Stopped:
            outcomes.append("stopped")

    with share.turn("running", 10):
        t = threading.Thread(target=waiting)
        t.start()
        _until(lambda: share.state()[1] == 1)
        share.stop()
        t.join(60)
        outcomes.append("running finished")
    assert outcomes == ["stopped", "running finished"]
    with pytest.raises(Stopped), share.turn("late", 10):
        pass


def test_a_waiting_piece_no_one_wants_gives_up_its_place() -> None:
    """A waiting piece whose request is no longer wanted (its client left) leaves the queue: the next
    piece takes the free slot, not the abandoned one."""
    share = FairShare(slots=1, poll_s=0.001)
    ran: list[str] = []
    left = threading.Event()

    def gone() -> None:
        if left.is_set():
            raise ConnectionAbortedError

    def waiting() -> None:
        with pytest.raises(ConnectionAbortedError), share.turn("left", 10, gone):
            ran.append("left")

    with share.turn("running", 10):
        ran.append("running")
        t = threading.Thread(target=waiting)
        t.start()
        _until(lambda: share.state()[1] == 1)
        left.set()
        t.join(60)
        assert share.state() == (1, 0)
    with share.turn("next", 10):
        ran.append("next")
    assert ran == ["running", "next"]


def test_pieces_of_a_costlier_embedder_hold_fewer_tokens() -> None:
    """Pieces hold about PIECE_S of their embedder's work as its pieces have taken so far: an embedder
    whose tokens take four times as long gets pieces a quarter the size (never under MIN_PIECE_COST), one
    never seen gets PIECE_COST, and a request's texts are scored in those pieces, in order."""
    share = FairShare(0)
    share.times.add("cheap", 512, PIECE_S)  # a full piece in PIECE_S
    share.times.add("costly", 512, 4 * PIECE_S)
    assert share.times.budget("unseen", PIECE_COST) == PIECE_COST
    assert share.times.budget("cheap", PIECE_COST) == PIECE_COST
    assert 127 <= share.times.budget("costly", PIECE_COST) <= 128
    share.times.add("costlier", 512, 100 * PIECE_S)
    assert share.times.budget("costlier", PIECE_COST) == MIN_PIECE_COST
    texts = ["x" * 100] * 6  # 41 each: one a piece under 64
    sizes = [len(p) for p in share.in_turns("me", texts, list, lambda: None, "costlier")]
    assert sizes == [1] * 6
    assert [len(p) for p in share.in_turns("me", texts, list, lambda: None, "unseen")] == [6]
