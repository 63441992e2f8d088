"""Which rerun requests a workbench session drops, changes, or answers by forgetting fragments
(app/ui/rerun_requests.py).

The races these rules answer need a timer or a blur to fire at the moment of a page switch or a click:
tests/app/test_demo_browser.py and tests/app/test_newcomer_browser.py drive the page switch in Chromium,
tests/app/test_reopen_browser.py clicks as the timer fires; here, each rule on the requests a browser sends
(ClientState, as the websocket carries it), and the private parts of Streamlit the patch relies on.
"""

from __future__ import annotations

import inspect
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
import streamlit
from hypothesis import given
from hypothesis import strategies as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.fragment import MemoryFragmentStorage
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from app.ui.rerun_requests import (
    _TRIGGERS,
    STREAMLIT_RELEASE,
    filter_rerun_requests,
    from_page_left,
    leaving_page,
    press_on_a_fragment_gone,
    without_triggers,
)

ON, LEFT = "hash-of-samples", "hash-of-models"


def session_on(page: str) -> AppSession:
    """A session whose latest run was on `page` (all the rules read of it)."""
    return cast(AppSession, SimpleNamespace(page_script_hash=page))


def request(page: str, fragment: str = "") -> ClientState:
    return ClientState(page_script_hash=page, fragment_id=fragment)


@pytest.mark.parametrize(
    ("sent", "dropped", "forgets"),
    [
        (request(LEFT, "browse-table"), True, False),  # the page left's timer, after st.switch_page
        (request(ON, "browse-table"), False, False),  # a fragment of the page the session is on
        (request("", "browse-table"), False, False),  # names no page: nothing to compare
        (request(LEFT), False, True),  # a move by the sidebar: forget the fragments, run the page
        (request(ON), False, False),  # a rerun of the same page
    ],
)
def test_a_fragment_rerun_from_the_page_left_is_dropped(
    sent: ClientState, dropped: bool, forgets: bool
) -> None:
    session = session_on(ON)
    assert from_page_left(session, sent) is dropped
    assert leaving_page(session, sent) is forgets


def test_no_client_state_is_neither() -> None:
    assert not from_page_left(session_on(ON), None)
    assert not leaving_page(session_on(ON), None)


# Widget states as a browser sends them: values that persist, and triggers (a click, a chat message).
_ids = st.text("abcdef", min_size=1, max_size=6)
_values = st.one_of(
    st.builds(lambda i, v: WidgetState(id=i, bool_value=v), _ids, st.booleans()),
    st.builds(lambda i, v: WidgetState(id=i, string_value=v), _ids, st.text(max_size=8)),
    st.builds(lambda i, v: WidgetState(id=i, int_value=v), _ids, st.integers(-5, 5)),
)
_triggers = st.one_of(
    st.builds(lambda i, v: WidgetState(id=i, trigger_value=v), _ids, st.booleans()),
    st.builds(lambda i: WidgetState(id=i, json_trigger_value='["x"]'), _ids),
)


@given(st.lists(st.one_of(_values, _triggers), max_size=8), st.booleans())
def test_a_timers_rerun_keeps_every_value_and_no_trigger(states: list[WidgetState], timer: bool) -> None:
    sent = ClientState(is_auto_rerun=timer)
    sent.widget_states.widgets.extend(states)
    without_triggers(sent)
    kept = list(sent.widget_states.widgets)
    is_trigger = [w.WhichOneof("value") in ("trigger_value", "json_trigger_value") for w in states]
    if timer:  # the values, in their order; the click's own request carries the triggers
        assert kept == [w for w, t in zip(states, is_trigger, strict=True) if not t]
    else:  # a click's or a page's request is left as it came
        assert kept == states


# What the patch relies on in Streamlit's private code: each check names what moved when a release changes it.
_MOVED = (
    "app/ui/rerun_requests.py patches Streamlit {release}'s AppSession and {what}: "
    "check the patch against the installed Streamlit, then move STREAMLIT_RELEASE and pyproject.toml's pin"
)


def test_streamlit_is_the_release_the_patch_was_written_for() -> None:
    """The installed Streamlit and pyproject.toml's pin are the minor release the patch was written for."""
    major, minor = (int(part) for part in STREAMLIT_RELEASE.split("."))
    installed = ".".join(streamlit.__version__.split(".")[:2])
    assert installed == STREAMLIT_RELEASE, _MOVED.format(
        release=STREAMLIT_RELEASE, what=f"Streamlit {streamlit.__version__} is installed"
    )
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    pin = f"streamlit>={STREAMLIT_RELEASE},<{major}.{minor + 1}"
    assert pin in pyproject["project"]["dependencies"], _MOVED.format(
        release=STREAMLIT_RELEASE, what=f"pyproject.toml does not pin {pin}"
    )


def test_the_session_internals_the_patch_touches_are_there() -> None:
    """`request_rerun` takes the client state, the session says its page, keeps its fragments in
    `_fragment_storage` whose `clear()` forgets them, and a rerun of a fragment it no longer holds is dropped
    by Streamlit itself (the patch only clears, and relies on that)."""
    release = STREAMLIT_RELEASE
    original = inspect.unwrap(AppSession.request_rerun)  # the workbench's pages may have patched it already
    assert list(inspect.signature(original).parameters) == ["self", "client_state"], _MOVED.format(
        release=release, what=f"request_rerun's parameters are now {inspect.signature(original)}"
    )
    assert isinstance(inspect.getattr_static(AppSession, "page_script_hash", None), property), _MOVED.format(
        release=release, what="AppSession.page_script_hash is no longer a property"
    )
    assert "self._fragment_storage" in inspect.getsource(AppSession.__init__), _MOVED.format(
        release=release, what="AppSession no longer keeps its fragments in _fragment_storage"
    )
    assert "self.has_fragment(" in inspect.getsource(original), _MOVED.format(
        release=release, what="request_rerun no longer drops a rerun of a fragment the session does not hold"
    )
    assert "self._fragment_storage.contains(" in inspect.getsource(AppSession.has_fragment), _MOVED.format(
        release=release, what="has_fragment no longer asks _fragment_storage"
    )
    storage = MemoryFragmentStorage()
    storage.register("browse-table", lambda: None)
    assert storage.contains("browse-table")
    storage.clear()
    assert not storage.contains("browse-table"), _MOVED.format(
        release=release, what="the fragment storage's clear() keeps fragments"
    )


def test_the_requests_carry_what_the_rules_read() -> None:
    """The fields the rules read are in the websocket's ClientState, and every trigger a widget state can be
    is one `without_triggers` drops (a new kind of click would otherwise reach the script twice)."""
    fields = set(ClientState.DESCRIPTOR.fields_by_name)
    read = {"page_script_hash", "fragment_id", "is_auto_rerun", "widget_states"}
    assert read <= fields, _MOVED.format(release=STREAMLIT_RELEASE, what=f"ClientState lost {read - fields}")
    values = {field.name for field in WidgetState.DESCRIPTOR.oneofs_by_name["value"].fields}
    triggers = {name for name in values if "trigger" in name or name == "chat_input_value"}
    assert triggers == set(_TRIGGERS), _MOVED.format(
        release=STREAMLIT_RELEASE, what=f"WidgetState's triggers are now {sorted(triggers)}"
    )


def test_widget_states_added_while_they_are_walked_stop_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk before a run reads the states there when it began; one added meanwhile (another thread of
    the session, during a page switch) no longer stops it with "dictionary changed size during iteration"."""
    from streamlit.runtime.state.session_state import Value, WStates

    from app.ui.widget_states import iterate_widget_states_on_a_copy

    monkeypatch.setattr(WStates, "__iter__", WStates.__iter__)  # Streamlit's own again after the test
    states = WStates()
    states.states.update({"a": Value(1), "b": Value(2)})
    with pytest.raises(RuntimeError, match="changed size"):  # Streamlit's own walk, unpatched
        for i, _ in enumerate(states.states):
            states.states[f"late{i}"] = Value(i)
    iterate_widget_states_on_a_copy()
    iterate_widget_states_on_a_copy()  # idempotent
    seen = []
    for wid in states:
        seen.append(wid)
        states[f"added-during-{wid}"] = Value(0)
    assert seen == ["a", "b", "late0"]
    assert "added-during-a" in states and len(states) == 6


class _Runner:
    """What a session hands its rerun requests to: records them (a script runner that always takes them)."""

    def __init__(self, runs: list[RerunData]) -> None:
        self.runs = runs

    def request_rerun(self, rerun: RerunData) -> bool:
        self.runs.append(rerun)
        return True

    def request_stop(self) -> None:
        pass


class _Session:
    """An AppSession as `request_rerun` reads it: on page `ON`, holding the fragments `held`."""

    def __init__(self, held: set[str]) -> None:
        self.runs: list[RerunData] = []
        self.held = held
        self.page_script_hash = ON
        self._state = AppSessionState.APP_IS_RUNNING
        self._client_state = ClientState()
        self._scriptrunner: _Runner | None = _Runner(self.runs)
        self._fragment_storage = MemoryFragmentStorage()

    def has_fragment(self, fragment_id: str) -> bool:
        return fragment_id in self.held

    def _create_scriptrunner(self, rerun: RerunData) -> None:
        self.runs.append(rerun)


def press(fragment: str, timer: bool = False) -> ClientState:
    sent = ClientState(page_script_hash=ON, fragment_id=fragment, is_auto_rerun=timer)
    sent.widget_states.widgets.append(WidgetState(id="withdraw-7", trigger_value=True))
    return sent


def test_a_press_on_a_fragment_a_page_run_replaced_runs_the_page() -> None:
    """A click sent before the whole-page run's elements came names the fragment's old id, which that run
    forgot: Streamlit dropped it, click and all. It runs the whole page, the click in it, once."""
    filter_rerun_requests()
    session = _Session(held={"labelling-at-12"})
    AppSession.request_rerun(cast(AppSession, session), press("labelling-at-11"))
    assert len(session.runs) == 1, "the press was dropped"
    (run,) = session.runs
    assert not run.fragment_id and not run.fragment_id_queue  # the whole page
    assert run.widget_states is not None
    assert [(w.id, w.trigger_value) for w in run.widget_states.widgets] == [("withdraw-7", True)]

    held = _Session(held={"labelling-at-12"})  # a press on a fragment held stays a rerun of that fragment
    AppSession.request_rerun(cast(AppSession, held), press("labelling-at-12"))
    assert [r.fragment_id for r in held.runs] == ["labelling-at-12"]
    timer = _Session(held=set())  # a timer of a fragment gone is dropped, as Streamlit does
    AppSession.request_rerun(cast(AppSession, timer), press("labelling-at-11", timer=True))
    assert timer.runs == []


def test_the_page_left_s_late_request_leaves_the_move_to_the_next_page() -> None:
    """A move by the sidebar, then the box of the page left sends its text on blur: that request reaches the
    server after the move's but before the move's run starts (the session still on the page left). It is
    dropped; it used to run as the whole page left, which took the pending move's place (a click on Label
    drew the Demo page again)."""
    filter_rerun_requests()
    session = _Session(held={"live-view"})
    AppSession.request_rerun(cast(AppSession, session), ClientState(page_script_hash=LEFT))
    typed = ClientState(page_script_hash=ON, fragment_id="live-view")
    typed.widget_states.widgets.append(WidgetState(id="demo_live", string_value="Thank you"))
    AppSession.request_rerun(cast(AppSession, session), typed)
    assert [r.page_script_hash for r in session.runs] == [LEFT], "the page left ran again"
    assert not from_page_left(cast(AppSession, session), request(LEFT, "a-fragment-of-the-next-page"))

    session.page_script_hash = LEFT  # the move's run started: the page left is left, the move is done
    AppSession.request_rerun(cast(AppSession, session), request(LEFT, "a-fragment-of-the-next-page"))
    assert len(session.runs) == 2
    session.page_script_hash = ON  # its own run moved back (`st.switch_page`): that page's requests count
    assert not from_page_left(cast(AppSession, session), request(ON, "live-view"))


def test_a_queued_press_whose_fragment_a_page_run_forgot_runs_the_page() -> None:
    """A press that reached the server during the whole-page run was queued as a rerun of the old id; the
    run forgot it at its end: with a press in it, the queued rerun runs the page; a timer's runs nothing."""
    clicked = press("labelling-at-11").widget_states
    queued = RerunData(widget_states=clicked, fragment_id_queue=["labelling-at-11"])
    assert press_on_a_fragment_gone(queued, {"labelling-at-12"}.__contains__)
    assert not press_on_a_fragment_gone(queued, {"labelling-at-11"}.__contains__)
    timer = RerunData(widget_states=ClientState().widget_states, fragment_id_queue=["labelling-at-11"])
    assert not press_on_a_fragment_gone(timer, set().__contains__)
    assert not press_on_a_fragment_gone(RerunData(widget_states=clicked), set().__contains__)
    assert "self._fragment_storage" in inspect.getsource(inspect.unwrap(ScriptRunner.__init__)), (
        _MOVED.format(
            release=STREAMLIT_RELEASE, what="ScriptRunner no longer keeps its fragments in _fragment_storage"
        )
    )
