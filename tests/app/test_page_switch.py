"""Which rerun requests a workbench session drops, or answers by forgetting fragments (app/ui/page_switch.py).

The blank page these rules prevent needs a timer or a blur to fire as the page switches, on a loaded machine:
tests/app/test_demo_browser.py and tests/app/test_newcomer_browser.py drive it in Chromium; here, each rule on
the requests a browser sends (ClientState, as the websocket carries it).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from app.ui.page_switch import from_page_left, leaving_page

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
