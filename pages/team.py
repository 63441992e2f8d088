"""Team: how the labelling of the picked model goes, per person; who is in the working namespace, with what
role; its owners add people, change roles, remove people.

Everything goes through the client's people methods (docs/api.md, "People"); the service enforces who may
(owners only) and that a namespace keeps an owner, and this page says so when it refuses.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.shell.backend import get_backend
from app.team.assignments import assigned_work
from app.team.campaign import campaign_settings
from app.team.gold import gold_quality
from app.team.progress import team_progress
from app.team.review import review_queue
from app.ui.flash import say_once
from app.ui.inert import code, escape_md
from app.ui.widgets import guard, selected_handle
from core.contract import ROLES

ROLE_HELP = "annotator labels; reviewer also settles disagreements; owner also manages models and people"

st.title("Team")
backend = get_backend()
ns = backend.namespace
say_once("team_flash")

# Every role of the namespace reads the progress; only its owners manage people (below).
if handle := selected_handle():
    model = None
    with guard("Reading the model"):
        model = backend.client.get_model(handle)
    if model is not None:
        campaign_settings(backend, model)
        team_progress(backend, model)
        assigned_work(backend, model)
        gold_quality(backend, model)
        review_queue(backend, model)
else:
    st.info("Pick a model in the sidebar to see how its labelling goes, person by person.")

st.subheader("People")
st.caption(f"People in namespace {code(ns)} and their roles ({ROLE_HELP}).")

if not backend.may("manage"):
    st.info(
        f"Only an owner of {code(ns)} sees and changes who is in it. Your role here: "
        f"**{escape_md(str(backend.key.role_in(ns) if backend.key else 'unknown'))}**.",
        icon=":material/lock:",
    )
    st.stop()

people = []
with guard("Listing the team"):
    people = backend.client.list_people(ns)

if people:
    frame = pd.DataFrame(
        [
            {
                "Member": m.member,
                "Name": m.display_name or "",
                "Role": m.role,
                "Signed in": "yes" if m.signed_in else "not yet",
            }
            for m in people
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch")
else:
    st.info("Nobody has been added to this namespace yet.", icon=":material/group_add:")

st.subheader("Add someone, or change a role")
with st.form("team_set", clear_on_submit=True):
    member = st.text_input(
        "Email", placeholder="name@example.com", help="Their email at the identity provider"
    )
    role = st.selectbox("Role", ROLES, index=0, help=ROLE_HELP)
    if st.form_submit_button("Save", type="primary"):
        with guard("Saving the role"):
            saved = backend.client.set_person_role(ns, member, role)
            st.session_state["team_flash"] = f"{escape_md(saved.member)} is now {saved.role} in `{ns}`."
            st.rerun()

if people:
    st.subheader("Remove someone")
    st.caption("Their labels stay; they can no longer use this namespace. The last owner cannot be removed.")
    with st.form("team_remove"):
        gone = st.selectbox("Member", [m.member for m in people])
        if st.form_submit_button("Remove"):
            with guard("Removing"):
                removed = backend.client.remove_person(ns, gone)
                st.session_state["team_flash"] = f"{escape_md(removed.member)} was removed from `{ns}`."
                st.rerun()
