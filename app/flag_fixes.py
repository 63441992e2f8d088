"""Fix flagged samples where they are shown: flip or set the quality, correct the text, or remove the sample.

Edits go through the service's sample PATCH / DELETE (draft models only); a fixed or removed sample leaves the
list of flags at once, so the analyst works down it without re-running the check.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.widgets import guard
from core.client import Client

SHOWN = 25  # flags with fix controls; the table above lists them all


def _forget(state_key: str, sample_id: int) -> None:
    handle, checked, flagged = st.session_state[state_key]
    st.session_state[state_key] = (handle, checked, [f for f in flagged if f.get("id") != sample_id])


def flag_fixes(client: Client, handle: str, flagged: list[dict[str, Any]], state_key: str) -> None:
    """One row of controls per flagged sample (the first `SHOWN`, each sample once)."""
    seen: set[int] = set()
    rows = [f for f in flagged if f.get("id") is not None and not (f["id"] in seen or seen.add(f["id"]))]
    st.markdown(f"**Fix flagged samples** ({min(len(rows), SHOWN)} of {len(rows)})")
    for flag in rows[:SHOWN]:
        sid = int(flag["id"])
        with st.container(border=True):
            st.caption(f"#{sid} · {flag['trait']} · {flag['flag']}: {flag['why']}")
            text = st.text_area("Text", flag["text"], key=f"fix_text_{sid}", height=80)
            c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
            quality = c1.number_input(
                "Quality", 0.0, 1.0, float(flag["quality"]), 0.05, key=f"fix_quality_{sid}"
            )
            flipped = 0.0 if float(flag["quality"]) >= 0.5 else 1.0
            action = None
            if c2.button(f"Flip to {flipped:g}", key=f"fix_flip_{sid}"):
                action = ("save", text, flipped)
            if c3.button("Save", key=f"fix_save_{sid}"):
                action = ("save", text, quality)
            if c4.button("Remove", key=f"fix_remove_{sid}"):
                action = ("remove", None, None)
            if action is None:
                continue
            with guard(f"Updating sample #{sid}"):
                if action[0] == "remove":
                    client.delete_sample(handle, sid)
                    message = f"Removed sample #{sid}."
                else:
                    kept = client.update_sample(handle, sid, text=action[1], quality=action[2])
                    message = f"Saved sample #{sid} (quality {kept.quality:g})." + (
                        f" It now equals stored sample #{kept.id}, which is kept instead."
                        if kept.id != sid
                        else ""
                    )
                _forget(state_key, sid)
                st.session_state["samples_flash"] = message
                st.rerun()
