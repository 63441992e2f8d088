"""Traits: the model's axes with their counts and metrics; add, edit inline, delete, discover."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.forms import trait_edits
from app.records import as_dict
from app.run_summary import show_summary, start_run, summarise
from app.versions import method_label
from app.widgets import guard, is_editable, open_model_page

EDITABLE_COLUMNS = ["name", "positive_label", "negative_label", "description", "aggregation"]
DISCOVER_EFFORTS = ["low", "medium", "high", "xhigh", "max"]

backend, client, model, handle, busy = open_model_page("Traits")
editable = is_editable(model)
if not editable and not busy:
    st.info(
        f"The model is **{model.get('state')}**: traits are frozen into its versions. "
        "Trait edits and discovery apply to draft (or failed) models."
    )
if flash := st.session_state.pop("traits_flash", None):
    st.success(flash)
with guard("Reading what discovery added"):
    show_summary(summarise(client, model, "discover"), "discover")

traits: list[dict] = []
with guard("Listing traits"):
    traits = [as_dict(t) for t in client.list_traits(handle)]

if traits:
    frame = pd.DataFrame(
        [
            {
                "key": t.get("key"),
                "kind": "intrinsic (discovered)" if t.get("kind") == "intrinsic" else "extrinsic",
                "name": t.get("name"),
                "negative_label": t.get("negative_label"),
                "positive_label": t.get("positive_label"),
                "description": t.get("description") or "",
                "aggregation": t.get("aggregation") or "mean",
                "samples": t.get("sample_count", 0),
                "positive": t.get("positive_samples", 0),
                "negative": t.get("negative_samples", 0),
                "discrimination": t.get("discrimination", 0.0),
                "explained_variance": t.get("explained_variance", 0.0),
                "trained as": method_label(t.get("method")),
            }
            for t in traits
        ]
    )
    st.caption("Edit names, labels, descriptions and aggregation in the table, then save.")
    # In a form, cell edits reach the app together with the save click, never as a rerun of their own.
    form = st.form("trait_edits", border=False)
    edited = form.data_editor(
        frame,
        key="traits_editor",
        hide_index=True,
        width="stretch",
        disabled=[c for c in frame.columns if c not in EDITABLE_COLUMNS] if editable else True,
        column_config={
            "aggregation": st.column_config.SelectboxColumn("aggregation", options=["mean", "max", "min"]),
            "discrimination": st.column_config.NumberColumn(format="%.3f"),
            "explained_variance": st.column_config.NumberColumn("explained variance", format="%.3f"),
        },
    )
    saved = form.form_submit_button("Save trait edits", disabled=not editable)
    if editable and saved:
        with guard("Saving trait edits"):
            edits = trait_edits(frame, edited, EDITABLE_COLUMNS)
            for key, fields in edits.items():
                client.update_trait(handle, key, **fields)
            st.session_state.pop("traits_editor", None)
            st.session_state["traits_flash"] = f"Updated {len(edits)} trait(s)."
            st.rerun()
    st.caption(
        "*intrinsic (discovered)* marks traits found by discovery. Metrics come from the active version."
    )
else:
    st.info("No traits yet: add one below, or discover them from samples.")

if editable:
    add, delete, discover = st.tabs(["Add", "Delete", "Discover"])
    with add, st.form("add_trait", clear_on_submit=True):
        name = st.text_input("Name", placeholder="Formality")
        a1, a2 = st.columns(2)
        negative = a1.text_input("Negative pole label", placeholder="casual")
        positive = a2.text_input("Positive pole label", placeholder="formal")
        description = st.text_input("Description")
        aggregation = st.selectbox("Aggregation of long texts", ["mean", "max", "min"])
        if st.form_submit_button("Add trait", type="primary"):
            if not (name.strip() and positive.strip() and negative.strip()):
                st.error("Name and both pole labels are required.")
            else:
                with guard("Adding the trait"):
                    spec = {
                        "name": name.strip(),
                        "positive_label": positive.strip(),
                        "negative_label": negative.strip(),
                        "description": description.strip(),
                        "aggregation": aggregation,
                    }
                    client.add_traits(handle, [spec])
                    st.session_state["traits_flash"] = f"Added trait {name.strip()!r}."
                    st.rerun()
    with delete:
        keys = [t["key"] for t in traits]
        doomed = st.multiselect("Traits to delete", keys, key="traits_delete_pick")
        if st.button("Delete selected traits", disabled=not doomed, key="traits_delete"):
            with guard("Deleting traits"):
                for key in doomed:
                    client.delete_trait(handle, key)
                st.session_state["traits_flash"] = f"Deleted {', '.join(doomed)}."
                st.rerun()
    with discover:
        st.caption(
            "Discovery pools the labelled samples, finds up to 3 new axes and adds them as intrinsic traits "
            "with their pole exemplars as samples. Higher effort considers more candidate traits."
        )
        effort = st.select_slider("Effort", DISCOVER_EFFORTS, value="medium", key="discover_effort")
        if st.button("Discover traits", key="discover_go", type="primary"):
            with guard("Starting discovery"):
                start_run(client, handle, "discover", lambda: client.discover(handle, effort))
                st.rerun()
