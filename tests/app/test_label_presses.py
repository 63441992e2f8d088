"""Votes = key presses, each on the text it was pressed on: the Label page's session logic
(app/labelling/key_presses.py) against the real local service, driven by generated interleavings of presses,
presses delivered again (a component's value re-sent on a rerun, a page left and come back to), presses that
arrive after the text changed, undo, and control changes (suggestion mode, overlap) between them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.labelling.key_presses import apply_key, should_apply
from app.labelling.labels_given import forget_withdrawn_label
from app.labelling.session import SUGGESTING, Failure, LabelSession, Press, shown_as
from app.labelling.suggestion_queue import first_suggestions_ready, set_mode_and_overlap, start
from core.client import Client, TransportError
from core.local import LocalService
from tests.support.app import make_draft, new_handle
from tests.support.apptest import no_exception, page, run_label_page, texts

POOL = [f"Pool text number {i}: something to decide on." for i in range(24)]
_nonces = itertools.count()

# What a person (and the page around them) does between two presses.
_step = st.one_of(
    st.tuples(st.just("press"), st.sampled_from(["1", "2", "1", "2", "0"])),  # on the text shown
    st.tuples(st.just("again"), st.integers(0, 1_000)),  # an earlier press delivered once more
    st.tuples(st.just("late"), st.sampled_from(["1", "2"])),  # pressed on a text shown before a change
    st.tuples(st.just("undo"), st.just("u")),
    st.tuples(
        st.just("control"),
        st.tuples(st.sampled_from(["auto", "diverse", "uncertain"]), st.sampled_from([0.0, 0.2, 0.5])),
    ),  # fmt: skip
    st.tuples(st.just("page"), st.just("")),  # left and come back: the listener re-sends its last value
)


@dataclass
class Person:
    """The test's own account: what was pressed on which text, with undo taking back the last label."""

    labelled: list[tuple[str, float]] = field(default_factory=list)  # (text, quality), in order
    delivered: list[Press] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # `shown` of every text shown so far


def _deliver(s: LabelSession, client: Client, press: Press) -> None:
    """What the page does with a press (pages/label.py `_press`; no `?` here)."""
    if should_apply(s, press):
        apply_key(s, press.key, client, client.get_model(s.handle))


@settings(max_examples=12, deadline=None)
@given(st.lists(_step, min_size=1, max_size=25))
def test_votes_are_the_presses_each_on_the_text_it_was_pressed_on(
    local_service: LocalService, client: Client, steps: list[tuple[str, object]]
) -> None:
    handle = make_draft(client, new_handle(local_service, "presses"))
    client.add_pool_texts(handle, POOL)
    s = LabelSession(handle, "formality")
    start(s, client)
    assert s.pending is not None
    s.pending.result(timeout=60)
    assert first_suggestions_ready(s, client) and s.current is not None
    me = Person()
    for kind, arg in steps:
        if s.current is not None:
            me.seen.append(str(shown_as(s.trait, s.current)))
        if kind == "press":
            press = Press(str(arg), shown_as(s.trait, s.current), f"n{next(_nonces)}")
            if s.current is not None and press.key in ("1", "2"):
                me.labelled.append((s.current["text"], 1.0 if press.key == "2" else 0.0))
            _deliver(s, client, press)
            me.delivered.append(press)
        elif kind == "again" and me.delivered:
            _deliver(s, client, me.delivered[int(str(arg)) % len(me.delivered)])
        elif kind == "page" and me.delivered:
            _deliver(s, client, me.delivered[-1])
        elif kind == "late":
            gone = [x for x in me.seen if x != shown_as(s.trait, s.current)]
            if gone:
                _deliver(s, client, Press(str(arg), gone[-1], f"n{next(_nonces)}"))
        elif kind == "undo":
            undo = Press("u", shown_as(s.trait, s.current), f"n{next(_nonces)}")
            if me.labelled:
                me.labelled.pop()
            _deliver(s, client, undo)
            me.delivered.append(undo)
        elif kind == "control":
            mode, overlap = cast(tuple[str, float], arg)
            set_mode_and_overlap(s, client, mode, overlap)
        assert not s.error, s.error

    stored = {x.text: x.quality for x in client.list_samples(handle, trait="formality", page_size=500)}
    votes = {text: quality for text, quality in stored.items() if text in POOL}
    assert votes == dict(me.labelled)  # one vote per press, on the text it was pressed on
    assert len(me.labelled) == len(votes)  # no text labelled twice
    assert len(s.history) == len(me.labelled)  # "labelled this session" follows, through control changes


def test_a_withdrawn_label_leaves_the_session_s_counters(local_service: LocalService, client: Client) -> None:
    """A trained model's label withdrawn from the buffer (the page's list) is no longer counted as labelled
    this session, and the texts left to label grow by one again."""
    handle = make_draft(client, new_handle(local_service, "withdraw"))
    client.add_pool_texts(handle, POOL)
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    s = LabelSession(handle, "formality")
    start(s, client)
    assert s.pending is not None
    s.pending.result(timeout=60)
    assert first_suggestions_ready(s, client) and s.left is not None
    left = s.left
    for key in ("2", "1"):
        _deliver(s, client, Press(key, shown_as(s.trait, s.current), f"n{next(_nonces)}"))
    assert (len(s.history), s.left) == (2, left - 2)
    first = s.history[0]["feedback_id"]
    assert first is not None  # a ready model: the labels went to the buffer
    client.withdraw_feedback(handle, first)
    forget_withdrawn_label(s, first)
    assert (len(s.history), s.left) == (1, left - 1)
    assert [label["quality"] for label in s.given] == [0.0]


@pytest.mark.usefixtures("app_env")
def test_a_button_acts_on_the_text_drawn_with_it(local_service: LocalService, client: Client) -> None:
    """The Label page (AppTest): a label button drawn with one text, clicked after the session moved on to
    another (as a key press's rerun does before the page is drawn anew), stores nothing; drawn again, it
    labels the text it is drawn with."""
    handle = make_draft(client, new_handle(local_service, "buttons"))
    client.add_pool_texts(handle, POOL)
    before = {x.id for x in client.list_samples(handle)}
    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    session = at.session_state["label_session"]
    session.pos += 1  # the next text, while the buttons still stand for the one drawn
    at.button(key="label_btn_2").click().run()
    no_exception(at)
    assert {x.id for x in client.list_samples(handle)} == before
    assert "nothing was stored" in at.session_state["label_session"].message
    shown = at.session_state["label_session"].current["text"]
    at.button(key="label_btn_2").click().run()  # drawn with the text shown now
    labelled = [(x.text, x.quality) for x in client.list_samples(handle) if x.id not in before]
    assert labelled == [(shown, 1.0)]
    # The count left beside this session's labels, in plain words: no minus sign, no arrow.
    (metric,) = at.metric
    assert (metric.value, metric.delta) == (f"{len(POOL) - 1} of {len(POOL)}", "1 done in this session")

    # The next suggestions failed (the service timed out): the page's status line asks again by itself (the
    # failure's *Try again* button does the same: tests/app/test_helpers.py), and the next text comes, without
    # a reload; the failure is said no more.
    session = at.session_state["label_session"]
    session.queue, session.pending = session.queue[: session.pos], None
    timed_out = TransportError("POST …/pool/suggest: ReadTimeout: timed out (after 4 attempts)")
    session.failure = Failure(SUGGESTING, timed_out)
    at.run()
    no_exception(at)
    assert at.session_state["label_session"].failure is None and not texts(at.error)
    assert at.session_state["label_session"].current is not None
    assert at.button(key="label_btn_2")
