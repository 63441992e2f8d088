"""Editing a trained model's data: the reopen offer and the reopened draft's note (docs/api.md, Reopen)."""

from __future__ import annotations

import streamlit as st

from app.ui.inert import code
from app.ui.widgets import guard
from core.client import Client, Model


def serving_version(model: Model) -> int | None:
    """The version that keeps serving while the model is edited (None before the first training)."""
    no = model.version_no
    return int(no) if no else None


def is_reopened(model: Model) -> bool:
    """A draft that has an active version: its edits become the next version when trained."""
    return model.state == "draft" and serving_version(model) is not None


def reopen_offer(client: Client, model: Model, flash_key: str, key: str) -> bool:
    """On a trained (`ready`) model, the button that reopens it for editing; True when it was shown.

    The whole page reruns after the reopen, so every section sees the draft at once."""
    if model.state != "ready" or (no := serving_version(model)) is None:
        return False
    zdr = model.zero_data_retention
    st.info(
        f"{code(model.handle)} is trained: its traits and samples are frozen into v{no:d}. Reopen it to edit "
        f"them; v{no:d} keeps serving scores until you train v{no + 1:d}."
        + (" Zero data retention deleted the samples at training, so the draft starts empty." if zdr else ""),
        icon=":material/lock:",
    )
    if st.button(f"Edit the data (v{no:d} keeps serving)", key=key, type="primary", icon=":material/edit:"):
        with guard("Reopening the model"):
            reopened = client.reopen(model.handle)
            message = reopened.last_operation.progress_message if reopened.last_operation else None
            st.session_state[flash_key] = f"{message or 'Reopened for editing'}."
            st.rerun(scope="app")
    return True


def reopened_note(model: Model) -> None:
    """Says what a reopened draft is: which version serves, and how its edits get served."""
    no = serving_version(model)
    if is_reopened(model) and no is not None:
        st.caption(
            f":material/edit_note: Draft reopened from v{no:d}: v{no:d} keeps serving scores while you edit. "
            f"Train on the **Training** page to make v{no + 1:d} from these samples."
        )
