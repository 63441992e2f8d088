"""Rerun requests a workbench session changes before Streamlit (1.67) queues them: two browser races.

**A page switch forgets the left page's fragments.** Leaving a page by its sidebar link takes the focus out of
whatever had it: a text box in a fragment (the Demo page's live box, a fragment's `st.text_input`) sends its
value on blur, which asks for a rerun of that fragment, and a `run_every` fragment's timer may fire at the
same moment. Such a request names the page left, and it can reach the server just after the page switch.
Streamlit keeps the old page's fragments until the new page's run ends, so it queues the request behind that
run and then runs it as a run of the old page: the fragment is gone ("Couldn't find fragment with id …"),
nothing is drawn, and the browser, told that a run of another page started, clears the main area. The page
stayed blank until the next action.

Streamlit already ignores a rerun of a fragment its session no longer holds. So when a whole-page rerun asks
for another page than the one the session is on, the session drops the fragments it holds at once, before
the new run starts: the new page registers its own as it runs, and a late request from the page left is
ignored. A move the page's own run makes (`st.switch_page`, the Models page's "Open") asks for no rerun the
session could see first; the session's page changes when the new page's run starts, and from then on a
fragment rerun that names the page left is dropped. Reruns of the same page, and its fragments', go on as
before.

The session's page changes only when the new page's run starts, which on a busy machine comes well after the
move's request: the page left's late request came in between, and was taken as a press on a fragment of the
page the session is on (below), run as the whole page left; folded into the move's pending rerun, it sent the
person back to the page they had just left (a click on Label drew the Demo page again). So from a move's
request until its run starts, the page the session is going to (`page_of`) is the one its requests are
compared with.

**A timer's rerun carries no click.** A button click sets the button's trigger in the browser and sends it
with the next flush of widget states (a `setTimeout(0)` later), which then clears it. A `run_every` timer that
fires in between sends every widget's state, the pending trigger too, and the flush sends it again: the
server saw two clicks. Both reach the script when the first run ends with `st.rerun()` (the second is
folded into that rerun), so an action ran twice: Save found nothing left and said "Nothing to save" over the
save's message, "More empty rows" added ten. The click's own request always carries its trigger, so a
timer's request drops the triggers it carries (`without_triggers`).

**A press on a fragment a whole-page run has just replaced was dropped.** A fragment's id is where it is
drawn: a whole-page run that draws something more or less above it (a message shown once, a note) registers it
under a new id and forgets the old one at its end. A click the browser sent before that run's elements came
names the old id, and Streamlit drops a rerun of a fragment its session no longer holds, click and all: the
person pressed and nothing happened. The same press reaching the server while that run was still going was
queued as a rerun of the old id, which the run then forgot, and the queued rerun ran nothing. A person's
request (not a timer's) naming a fragment the session no longer holds, on the page the session is on, runs
the whole page instead (`for_the_whole_page`), and so does a queued rerun that carries a press and names a
fragment forgotten meanwhile (`press_on_a_fragment_gone`): the press counts once, as the page draws the
pressed widget under its key again, fragment or not.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

_LOG = logging.getLogger(__name__)
_MARK = "_workbench_filters_reruns"
# The Streamlit release whose private `AppSession` this patches (pyproject.toml pins its minor):
# `request_rerun(client_state)`, the `page_script_hash` property, `_fragment_storage` and its `clear()`,
# `has_fragment`, and `request_rerun` dropping a rerun of a fragment `has_fragment` no longer finds.
# tests/app/test_rerun_requests.py fails, naming what moved, when another release changes them.
STREAMLIT_RELEASE = "1.67"


_MOVING = "_workbench_moving"  # on a session: (its page when a move was asked for, the page moved to)


def page_of(session: AppSession) -> str:
    """The page the session is on, or is going to: a move asked for whose run has not started yet (the
    session's own page is still the one it asked to leave)."""
    moving: tuple[str, str] | None = getattr(session, _MOVING, None)
    if moving is not None and session.page_script_hash == moving[0]:
        return moving[1]
    return session.page_script_hash


def moving_to(session: AppSession, client_state: ClientState | None) -> None:
    """Note the page a whole-page request goes to until its run starts (`page_of`); a move whose run has
    started is forgotten, so a later move back by the page's own run (`st.switch_page`) is not mistaken
    for it."""
    moving: tuple[str, str] | None = getattr(session, _MOVING, None)
    if moving is not None and session.page_script_hash != moving[0]:
        setattr(session, _MOVING, None)
    if client_state is not None and not client_state.fragment_id and client_state.page_script_hash:
        setattr(session, _MOVING, (session.page_script_hash, client_state.page_script_hash))


def leaving_page(session: AppSession, client_state: ClientState | None) -> bool:
    """Whether this rerun request moves the session to another page (a whole-page run of a page other than
    the one it is on or going to)."""
    if client_state is None or client_state.fragment_id:
        return False
    return client_state.page_script_hash != page_of(session)


def from_page_left(session: AppSession, client_state: ClientState | None) -> bool:
    """Whether this request reruns a fragment of a page the session has since left, or is leaving (a request
    without a page names none: the browser's first)."""
    if client_state is None or not client_state.fragment_id or not client_state.page_script_hash:
        return False
    return client_state.page_script_hash != page_of(session)


def for_the_whole_page(session: AppSession, client_state: ClientState | None) -> bool:
    """Whether this request is a person's press on a fragment of this page that the session no longer holds
    (replaced by a whole-page run meanwhile): then it runs the whole page rather than being dropped."""
    if client_state is None or not client_state.fragment_id or client_state.is_auto_rerun:
        return False
    if from_page_left(session, client_state):
        return False
    return not session.has_fragment(client_state.fragment_id)


def press_on_a_fragment_gone(rerun: RerunData, holds: Callable[[str], bool]) -> bool:
    """Whether a queued fragment rerun carries a press (a trigger) while a fragment it names is no longer
    held (`holds`: the session's fragment storage; the whole-page run that ran meanwhile forgot it)."""
    if not rerun.fragment_id_queue or all(holds(f) for f in rerun.fragment_id_queue):
        return False
    return _carries_a_press(rerun.widget_states)


def _carries_a_press(states: WidgetStates | None) -> bool:
    """Whether the states hold a trigger: a click (set), a string or JSON trigger, a chat message."""
    if states is None:
        return False
    kinds = [(w.WhichOneof("value"), w.trigger_value) for w in states.widgets]
    return any(kind in _TRIGGERS and (kind != "trigger_value" or clicked) for kind, clicked in kinds)


_TRIGGERS = ("trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value")


def without_triggers(client_state: ClientState) -> None:
    """Drop the widget states of a timer's request that are triggers (a click, a chat message): a timer
    clicks nothing, and the click's own request carries them."""
    if not client_state.is_auto_rerun:
        return
    states = client_state.widget_states.widgets
    kept = [w for w in states if w.WhichOneof("value") not in _TRIGGERS]
    if len(kept) < len(states):
        _LOG.info("dropped %d trigger(s) from a timer's rerun", len(states) - len(kept))
        del states[:]
        states.extend(kept)


def filter_rerun_requests() -> None:
    """Make every session of this process apply the rules above to the rerun requests it gets (idempotent)."""
    original = AppSession.request_rerun
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def request_rerun(self: AppSession, client_state: ClientState | None) -> None:
        if client_state is not None and from_page_left(self, client_state):
            _LOG.info("dropped a rerun of fragment %s of the page left", client_state.fragment_id)
            return
        if client_state is not None:
            without_triggers(client_state)
            if for_the_whole_page(self, client_state):
                _LOG.info("ran the page for a press on fragment %s, gone", client_state.fragment_id)
                client_state.fragment_id = ""
        if leaving_page(self, client_state):
            # Private, but the one place the session's fragments are kept (STREAMLIT_RELEASE above).
            storage = getattr(self, "_fragment_storage", None)
            if storage is not None:
                storage.clear()
            else:
                _LOG.warning("Streamlit's session keeps no _fragment_storage: page switches may draw blank")
        moving_to(self, client_state)
        original(self, client_state)

    setattr(request_rerun, _MARK, True)
    AppSession.request_rerun = request_rerun  # type: ignore[method-assign]  # a patch said above
    run_script = ScriptRunner._run_script

    @functools.wraps(run_script)
    def _run_script(self: ScriptRunner, rerun_data: RerunData) -> None:
        # Private, as `_fragment_storage` above (STREAMLIT_RELEASE).
        if press_on_a_fragment_gone(rerun_data, self._fragment_storage.contains):
            _LOG.info("ran the page for a press on fragment(s) %s, forgotten", rerun_data.fragment_id_queue)
            rerun_data = dataclasses.replace(rerun_data, fragment_id_queue=[], is_fragment_scoped_rerun=False)
        run_script(self, rerun_data)

    ScriptRunner._run_script = _run_script  # type: ignore[method-assign]  # a patch said above
