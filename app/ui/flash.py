"""What an action says once: its callback leaves a message in the session's state, and the run it starts
shows it and forgets it.

Forgotten only after it is drawn. Streamlit stops a run for a newer request (a whole-page rerun a press or
a page's own timer asked for) as the run sends its next element, before sending it: a message taken out of
the state first and then stopped at its drawing was never seen by anyone, and the person's "Saved" or
"Withdrew" went missing though the action was done. Left in the state until drawn, it is the next run's to
show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st


def say_once(key: str, show: Callable[[Any], object] = st.success) -> Any:
    """Show the message an action left under `key` with `show`, then forget it; what was said (None:
    nothing)."""
    said = st.session_state.get(key)
    if said is None:
        return None
    show(said)
    st.session_state.pop(key, None)
    return said
