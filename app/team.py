"""A team's workbench: team mode's sign-in page (each browser its own key), and who you are in the sidebar.

The key typed here goes to `st.session_state` only (the server's memory for this browser tab): never to a
file, a URL or another session; signing out, or closing or reloading the tab, forgets it.
"""

from __future__ import annotations

import streamlit as st

from app.backend import Backend, sign_in, sign_out
from app.widgets import MODEL_KEY, guard


def sign_in_page(url: str) -> None:
    st.title("Sign in")
    st.markdown(
        f"This workbench is shared by a team and works against the scoring service at `{url}`. "
        "Sign in with **your own** API key: every label you give is recorded under your name, so the team "
        "can see where it agrees."
    )
    with st.form("sign_in"):
        key = st.text_input("Your API key", type="password", placeholder="sk_…")
        go = st.form_submit_button("Sign in", type="primary")
    if go:
        with guard("Signing in", on_settings=True):
            sign_in(key)
            st.session_state[MODEL_KEY] = None
            st.rerun()
    st.caption(
        "The key stays in this browser tab's session on the workbench server: not in a cookie, a file or "
        "the address bar. Closing or reloading the tab signs you out. No key? The service's operator creates "
        "one: `python -m service keys create --namespace <team> --scope authoring --name <you>`."
    )


def identity(backend: Backend) -> None:
    """The sidebar's line saying who labels here, and (team mode) the way out."""
    if backend.annotator:
        verb = "Signed in as" if backend.team else "Labelling as"
        st.caption(f":material/person: {verb} **{backend.annotator}**")
    if backend.team and st.button("Sign out", key="team_sign_out", icon=":material/logout:"):
        sign_out()
        st.session_state[MODEL_KEY] = None
        st.rerun()
