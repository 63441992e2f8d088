"""A session's widget states read on a copy of their keys: one Streamlit (1.67) race.

Before a run, Streamlit walks the session's new widget states to call the callbacks of those that changed
(`SessionState._call_callbacks`: `for wid in self._new_widget_state`). On a page switch right after typing
in a fragment's box (the Demo page's live text), another thread of the session adds a widget's state to that
mapping meanwhile, and the walk stopped with "RuntimeError: dictionary changed size during iteration": the
page moved to showed Streamlit's exception instead of drawing. Walking a copy of the keys (taken in one step
under the interpreter lock) reads the states as they were when the walk began; one added meanwhile is read
by the next run, as any state arriving after a run starts is.
"""

from __future__ import annotations

from collections.abc import Iterator

from streamlit.runtime.state.session_state import WStates

_MARK = "_workbench_iterates_a_copy"


def iterate_widget_states_on_a_copy() -> None:
    """Make every session's widget states iterate over a copy of their keys (idempotent)."""
    if getattr(WStates.__iter__, _MARK, False):
        return

    def __iter__(self: WStates) -> Iterator[str]:
        yield from list(self.states)  # Streamlit's own: `yield from self.states`

    setattr(__iter__, _MARK, True)
    WStates.__iter__ = __iter__  # type: ignore[method-assign]
