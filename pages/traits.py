"""Traits: the model's axes with their counts and metrics; add, edit inline, delete, discover."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.evaluation.versions import method_label, neutral_note
from app.labelling.agreement import agreement_section
from app.labelling.scale_form import scale_kind, scale_section
from app.labelling.trait_preview import zero_shot_preview
from app.shell import reads
from app.shell.roles import allows, gate
from app.ui.flash import say_once
from app.ui.forms import trait_edits
from app.ui.inert import code, escape_md
from app.ui.reopen import reopen_offer, reopened_note
from app.ui.run_summary import show_summary, start_run, summarise
from app.ui.widgets import guard, is_editable, open_model_page
from core.client import Trait
from core.contract import AGGREGATIONS, DISCOVER_EFFORTS, trait_key

EDITABLE_COLUMNS = ["name", "positive_label", "negative_label", "description", "aggregation"]

backend, client, model, handle, busy = open_model_page("Traits")
editable = is_editable(model)
manage = allows(backend.key, "manage")
say_once("traits_flash")
if (
    not editable
    and not busy
    and not (manage and reopen_offer(client, model, "traits_flash", "traits_reopen"))
):
    st.info(
        f"The model is **{escape_md(model.state)}**: traits are frozen into its versions. "
        "Trait edits and discovery apply to draft (or failed) models."
    )
if editable and not gate(backend, "manage", "Editing traits (add, change, delete, discover)"):
    editable = False  # the table and the tabs below show, read-only
reopened_note(model)
with guard("Reading what discovery added"):
    show_summary(summarise(client, model, "discover"), "discover")

traits: list[Trait] = []
with guard("Listing traits"):
    traits = reads.traits(client, handle)

if traits:
    frame = pd.DataFrame(
        [
            {
                "key": t.key,
                "kind": "intrinsic (discovered)" if t.kind == "intrinsic" else "extrinsic",
                "name": t.name,
                "negative_label": t.negative_label,
                "positive_label": t.positive_label,
                "description": t.description or "",
                "aggregation": t.aggregation or "mean",
                "labelled with": scale_kind(t),
                "samples": t.sample_count,
                "positive": t.positive_samples,
                "negative": t.negative_samples,
                "neutral": t.neutral_samples,
                "discrimination": t.discrimination,
                "explained_variance": t.explained_variance,
                "trained as": method_label(t.method),
            }
            for t in traits
        ]
    )
    if editable:
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
            "aggregation": st.column_config.SelectboxColumn("aggregation", options=list(AGGREGATIONS)),
            "discrimination": st.column_config.NumberColumn(format="%.3f"),
            "explained_variance": st.column_config.NumberColumn("explained variance", format="%.3f"),
        },
    )
    # A trained model's traits are frozen (said above): no Save button to stare at, disabled.
    saved = form.form_submit_button("Save trait edits") if editable else False
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
    if note := neutral_note(sum(t.neutral_samples for t in traits), "samples", "training"):
        st.caption(note)
else:
    st.info("No traits yet: add one below, or discover them from samples.")
if traits:
    agreement_section(client, handle, traits)

if editable:
    add, scale, delete, discover = st.tabs(["Add", "Scale", "Delete", "Discover"])
    with scale:
        if traits:
            scale_section(client, handle, traits)
        else:
            st.info("Add a trait first.")
    with add:
        # The form's widgets carry a generation in their keys: after "Add trait" a new generation starts
        # empty (popping a widget's key does not clear it: the browser sends its value back).
        gen = st.session_state.setdefault("trait_new_gen", 0)
        name = st.text_input("Name", placeholder="Formality", key=f"trait_new_name_{gen}")
        a1, a2 = st.columns(2)
        negative = a1.text_input("Negative pole label", placeholder="casual", key=f"trait_new_negative_{gen}")
        positive = a2.text_input("Positive pole label", placeholder="formal", key=f"trait_new_positive_{gen}")
        description = st.text_area(
            "Description",
            key=f"trait_new_description_{gen}",
            height=90,
            placeholder="What the trait measures; a sentence per pole helps its zero-shot start.",
        )
        aggregation = st.selectbox(
            "Aggregation of long texts", AGGREGATIONS, key=f"trait_new_aggregation_{gen}"
        )
        spec = {
            "name": name.strip() or "Preview",
            "positive_label": positive.strip(),
            "negative_label": negative.strip(),
            "description": description.strip(),
            "aggregation": aggregation,
        }
        # The button comes before the preview: the first preview waits on the service's model (up to a
        # minute), and a form whose button shows only after it looks broken. A click interrupts the preview.
        if st.button("Add trait", type="primary", key="trait_add"):
            # A name is taken when a trait has it (any case) or its key: the service would key the new one
            # `politeness_2`, two traits one meaning.
            taken = {t.name.strip().casefold(): t.key for t in traits} | {t.key: t.key for t in traits}
            twin = taken.get(name.strip().casefold()) or taken.get(trait_key(name.strip()))
            if not (name.strip() and positive.strip() and negative.strip()):
                st.error("Name and both pole labels are required.")
            elif twin:
                st.error(
                    f"The model already has a trait named like {escape_md(repr(name.strip()))} "
                    f"(key {code(twin)}): choose another name, or edit that trait in the table."
                )
            else:
                with guard("Adding the trait"):
                    client.add_traits(handle, [{**spec, "name": name.strip()}], if_exists="error")
                    st.session_state["trait_new_gen"] = gen + 1  # an empty form for the next trait
                    st.session_state["traits_flash"] = f"Added trait {name.strip()!r}."
                    st.rerun()
        if spec["positive_label"] and spec["negative_label"]:
            st.caption("The first preview can take a minute while the service loads its model: go on.")
            zero_shot_preview(client, handle, spec)
    with delete:
        keys = [t.key for t in traits]
        doomed = st.multiselect("Traits to delete", keys, key="traits_delete_pick")
        if doomed:
            counts = {t.key: t.sample_count for t in traits}
            st.warning(
                f"Deleting {', '.join(code(k) for k in doomed)} removes "
                f"{sum(counts.get(k, 0) for k in doomed):,} sample(s) with it; it cannot be undone.",
                icon=":material/delete_forever:",
            )
        sure = st.checkbox("Yes, delete them", key="traits_delete_sure", disabled=not doomed)
        if st.button("Delete selected traits", disabled=not (doomed and sure), key="traits_delete"):
            with guard("Deleting traits"):
                for key in doomed:
                    client.delete_trait(handle, key)
                st.session_state["traits_flash"] = f"Deleted {', '.join(doomed)}."
                st.session_state.pop("traits_delete_sure", None)
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
