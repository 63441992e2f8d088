"""A team's workbench: the sign-in page (as a person through the team's identity provider, or with one's own
key), and who you are in the sidebar, with the way out.

A key typed here goes to `st.session_state` only (the server's memory for this browser tab): never to a
file, a URL or another session; signing out, or closing or reloading the tab, forgets it. A person signed in
through the identity provider stays signed in across reloads (Streamlit's identity cookie) until they sign
out. Signing out either way forgets everything of theirs in the tab (app/shell/backend.py `sign_out`).
"""

from __future__ import annotations

import streamlit as st

from app.shell.backend import Backend, end_person_session, key_info, sign_in, sign_out
from app.shell.signin_config import signin_config
from app.ui.inert import code, escape_md
from app.ui.widgets import MODEL_KEY, guard


def sign_in_page(url: str) -> None:
    config = signin_config()
    st.title("Sign in")
    if config is not None:
        st.markdown(
            f"This workbench is shared by a team and works against the scoring service at {code(url)}. "
            f"Sign in as yourself with **{escape_md(config.provider_name)}**: every label you give is "
            "recorded under your email, so the team can see where it agrees."
        )
        if st.button("Sign in", type="primary", icon=":material/login:"):
            st.login()
        st.caption(
            "You stay signed in in this browser until you sign out. Signed in but refused? An owner of your "
            "team's namespace adds you on the Team page (or the operator: `python -m service people add`)."
        )
        return
    st.markdown(
        f"This workbench is shared by a team and works against the scoring service at {code(url)}. "
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


def leave() -> None:
    """Sign out: forget everything of this person in the tab; a person also ends their sign-in on the
    service (every tab and browser of theirs, at its next run: app/shell/backend.py `end_person_session`)
    and leaves Streamlit's sign-in (its identity cookie), which starts a new session."""
    person = signin_config() is not None and st.user.is_logged_in
    if person:
        with guard("Signing out"):  # the service unreachable: say so, and stay signed in to try again
            end_person_session()
            sign_out()
            st.logout()
        return
    sign_out()
    st.session_state[MODEL_KEY] = None
    st.rerun()


def sign_out_button(key: str = "team_sign_out") -> None:
    if st.button("Sign out", key=key, icon=":material/logout:"):
        leave()


def identity(backend: Backend) -> None:
    """The sidebar's line saying who labels here, and (team mode) the way out."""
    if backend.annotator:
        verb = "Signed in as" if backend.team else "Labelling as"
        shown = backend.annotator
        if backend.person and backend.key is not None and backend.key.display_name:
            shown = f"{backend.key.display_name} ({backend.annotator})"
        st.caption(f":material/person: {verb} **{escape_md(shown)}**")
        if backend.person and backend.key is not None:
            role = str(backend.key.role_in(backend.namespace))
            st.caption(f"Role in {code(backend.namespace)}: **{escape_md(role)}**")
    if backend.team:
        sign_out_button()


def expired_page(exc: BaseException | str, lost: str = "") -> None:
    """A person whose ID token the service no longer takes: signed out (here, in another tab or browser),
    idle too long, expired. Nothing of theirs shows and nothing acts as them: the tab is emptied. `lost`:
    what the refused request did not do (a key press's label not stored)."""
    sign_out()
    st.title("Sign in again")
    st.warning(f"You are signed out: {escape_md(str(exc))}", icon=":material/key_off:")
    if lost:
        st.error(escape_md(lost), icon=":material/block:")
    if st.button("Sign in again", type="primary", icon=":material/login:"):
        st.login()
    if st.button("Sign out", icon=":material/logout:"):  # forget this browser's dead sign-in cookie
        st.logout()


def no_namespace_page(message: str) -> None:
    st.title("Not in a team yet")
    st.info(message, icon=":material/group_off:")
    if st.button("Check again", icon=":material/refresh:"):  # once an owner has added them
        key_info.clear()
        st.rerun()
    sign_out_button("no_namespace_sign_out")
