"""A trained model's buffered feedback, listed where labels are given, each label with a Withdraw button.

The buffer is the service's (`GET …/feedback`): labels wait there for the model's next version (`retrain_at`
of them retrain it where automatic retraining is on). An analyst who sent a label by mistake takes it back
here before a training takes it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.shell.roles import allows, refusal
from app.ui.flash import say_once
from app.ui.inert import code, escape_md
from core.client import ApiError, Client, KeyInfo

SHOWN = 100  # labels listed (the buffer retrains at SCORING_RETRAIN_BUFFER, 20 by default)
FLASH = "feedback_flash"


def _withdraw(
    client: Client, handle: str, label_id: int, on_withdrawn: Callable[[int], None] | None = None
) -> None:
    try:
        out = client.withdraw_feedback(handle, label_id)
        if on_withdrawn is not None:  # the page's counters follow (labels_given.forget_withdrawn_label)
            on_withdrawn(label_id)
        st.session_state[FLASH] = (
            f"Withdrew feedback label #{label_id}: {out.buffered} left in the buffer.",
            True,
        )
    except ApiError as exc:
        st.session_state[FLASH] = (f"Label #{label_id} was not withdrawn: {exc.message}", False)


def buffered_feedback(
    client: Client,
    handle: str,
    key: KeyInfo | None = None,
    on_withdrawn: Callable[[int], None] | None = None,
    auto_retrain: bool = True,
) -> None:
    """An expander with the buffered labels and a Withdraw button each; nothing for a key that may not read
    the buffer (it may not send feedback either). `key`: the calling key, whose role decides whose labels
    it may withdraw (its own: labelling; a colleague's: the reviewer role). `on_withdrawn(label_id)` is
    called after a label is withdrawn."""
    try:
        page = client.feedback_page(handle, limit=SHOWN)
    except ApiError:
        return
    say_once(FLASH, lambda said: (st.success if said[1] else st.warning)(said[0]))
    at = f" of {page.retrain_at:,}" if page.retrain_at else ""
    until = (
        f"{at} label(s) until the model retrains"
        if auto_retrain
        else " label(s), automatic retraining paused"
    )
    with st.expander(f"Buffered feedback: {page.buffered:,}{until}"):
        if not page.items:
            st.caption("No label is waiting.")
            return
        st.caption("Labels sent to this trained model, waiting for its next version. Withdraw one sent by "
                   "mistake: it will not be trained on.")  # fmt: skip
        me = key.name if key is not None else None
        others = refusal(key, "review", "Withdrawing a colleague's label")
        if others and any(f.annotator != me for f in page.items):
            st.caption(f":material/lock: {escape_md(others)}")
        for f in page.items:
            text, button = st.columns([6, 1], vertical_alignment="center")
            short = f.text if len(f.text) <= 160 else f.text[:159] + "…"
            who = f" · by {escape_md(f.annotator)}" if f.annotator else ""
            text.markdown(f"{code(f.trait)} · quality {f.quality:g}{who} · {escape_md(short)}")
            mine = f.annotator == me
            allowed = allows(key, "label") if mine else others is None
            button.button("Withdraw", key=f"feedback_withdraw_{f.id}", on_click=_withdraw,
                          args=(client, handle, f.id, on_withdrawn), width="stretch",
                          disabled=not allowed)  # fmt: skip
        if page.next_cursor:
            st.caption(f"The first {SHOWN} are listed.")
