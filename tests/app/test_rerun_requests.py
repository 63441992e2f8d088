"""Which rerun requests a workbench session drops, changes, or answers by forgetting fragments
(app/ui/rerun_requests.py).

The races these rules answer need a timer or a blur to fire at the moment of a page switch or a click:
tests/app/test_demo_browser.py and tests/app/test_newcomer_browser.py drive the page switch in Chromium,
tests/app/test_reopen_browser.py clicks as the timer fires; here, each rule on the requests a browser sends
(ClientState, as the websocket carries it).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession

from app.ui.rerun_requests import from_page_left, leaving_page, without_triggers

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
