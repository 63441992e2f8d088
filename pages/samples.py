"""Samples: a trait's samples paged from the server; add, import, export, synthesize, flags."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import reads
from app.agreement_view import disagreements_panel
from app.flag_fixes import flags_tab as flags_panel
from app.labels import LabelsRefused, add_labels, labelling_note
from app.paging import paged, pager_buttons
from app.quality_input import quality_slider
from app.reopen import reopen_offer, reopened_note
from app.run_summary import show_summary, start_run, summarise
from app.sample_edits import apply_edits, grid_changes, save_message
from app.sample_import import sample_import_section
from app.sample_io import refused_rows, to_csv, to_jsonl
from app.widgets import guard, is_editable, open_model_page
from core.client import Trait
from core.contract import DISCOVER_EFFORTS  # synthesis takes the discovery efforts

PROVENANCES = ["(any)", "authored", "synthesized", "discovered", "feedback"]

backend, client, model, handle, busy = open_model_page("Samples")
editable = is_editable(model)
labelling = model.state == "ready" and not model.zero_data_retention  # labels go in as feedback
if flash := st.session_state.pop("samples_flash", None):
    st.success(flash)
if not busy:
    reopen_offer(client, model, "samples_flash", "samples_reopen")
if not editable and not busy and (note := labelling_note(model)):  # what a label does meanwhile
    st.info(note, icon=":material/school:" if labelling else ":material/block:")
reopened_note(model)
if model.zero_data_retention:
    st.caption("Zero data retention is on: samples are purged when a training completes.")
if warning := st.session_state.pop("samples_flash_warning", None):
    st.warning(warning)
with guard("Reading what synthesis added"):
    show_summary(summarise(client, model, "synthesize"), "synthesize")
# A link from a run's summary opens the samples it added (?provenance=…); the filter stays the user's after.
if (linked := st.query_params.get("provenance")) in PROVENANCES:
    st.session_state["samples_provenance"] = linked
    del st.query_params["provenance"]

traits: list[Trait] = []
with guard("Listing traits"):
    traits = reads.traits(client, handle)
trait_keys = [t.key for t in traits]
trait_names = {t.key: t.name for t in traits}

browse_tab, import_tab, export_tab, synth_tab, flags_tab, disagree_tab = st.tabs(
    ["Browse & add", "Import", "Export", "Synthesize", "Flags", "Disagreements"]
)

with browse_tab:
    f1, f2, f3 = st.columns([2, 2, 1])
    trait_pick = f1.selectbox(
        "Trait",
        ["(all)", *trait_keys],
        key="samples_trait",
        format_func=lambda k: k if k == "(all)" else f"{trait_names.get(k, k)} ({k})",
    )
    provenance = f2.selectbox("Provenance", PROVENANCES, key="samples_provenance")
    limit = f3.selectbox("Per page", [25, 50, 100, 250, 500], index=2, key="samples_limit")
    trait_arg = None if trait_pick == "(all)" else trait_pick
    prov_arg = None if provenance == "(any)" else provenance
    with guard("Listing samples"):
        page = paged(
            "samples_pager",
            (handle, trait_arg, prov_arg, limit),
            lambda cursor: client.list_samples_page(handle, trait_arg, prov_arg, limit, cursor),
        )
        rows = page.items
        # One editor state per page of data: rows added on one page must not reappear on another.
        pager_state = st.session_state["samples_pager"]
        editor_key = f"samples_editor_{abs(hash((pager_state['filters'], pager_state['stack'][-1])))}"
        frame = pd.DataFrame(
            [
                {
                    "id": r.id,
                    "trait": r.trait,
                    "text": r.text,
                    "quality": r.quality,
                    "provenance": r.provenance,
                    "source_url": r.source_url,
                }
                for r in rows
            ],
            columns=["id", "trait", "text", "quality", "provenance", "source_url"],
        )
        # Rows the service refused on the last save stay in the grid below the stored ones, marked with why,
        # so the user fixes them instead of typing them again; so do stored rows whose edit was refused.
        pending = st.session_state.get("samples_pending", []) if editable else []
        edit_problems = st.session_state.get("samples_edit_problems", {}) if editable else {}
        stored_count = len(frame)
        texts_by_id = {r.id: r.text for r in rows}
        marked = bool(pending or edit_problems)
        if marked:  # the problem column only while there are refused rows to fix
            frame["problem"] = [edit_problems.get(int(i), "") for i in frame["id"]] if stored_count else ""
            frame = pd.concat([frame, pd.DataFrame(pending)], ignore_index=True)
        st.caption(
            "Edit text, trait and quality in place, delete rows (select them, then the bin icon), add rows "
            "at the bottom; then save. Flagged samples are fixed from the Flags tab."
            if editable
            else "Samples of a trained model are frozen into its versions; reopen it above to edit them."
        )
        # In a form, edits reach the app together with the save click, never as reruns of their own.
        form = st.form(f"samples_form_{editor_key}", border=False)
        edited = form.data_editor(
            frame,
            key=editor_key,
            hide_index=True,
            width="stretch",
            num_rows="dynamic" if editable else "fixed",
            # The reason first, so it shows beside a refused row even on a narrow screen.
            column_order=["problem", *frame.columns.drop("problem")] if marked else None,
            disabled=["id", "provenance", *(["problem"] if marked else [])] if editable else True,
            # Narrow bookkeeping columns: with the row-selection column the grid still fits 1280 px without
            # a horizontal scrollbar, and the text gets the room.
            column_config={
                "id": st.column_config.NumberColumn("id", width="small"),
                "provenance": st.column_config.TextColumn("provenance", width="small"),
                "source_url": st.column_config.TextColumn("source_url", width="small"),
                "trait": st.column_config.SelectboxColumn("trait", options=trait_keys, required=True),
                "text": st.column_config.TextColumn("text", width="large", required=True),
                # Not required: a row without a quality reaches the service and comes back with its reason.
                "quality": st.column_config.NumberColumn("quality", min_value=0.0, max_value=1.0, step=0.05),
                "problem": st.column_config.TextColumn("problem", width="medium"),
            },
        )
        save_clicked = form.form_submit_button("Save changes", disabled=not editable, type="primary")
        pager_buttons("samples_pager", page)
        if editable and save_clicked:
            changes = grid_changes(frame, stored_count, st.session_state.get(editor_key))
            if changes.empty:
                st.info("Nothing to save: edit cells, delete rows or add rows at the bottom first.")
            else:
                with guard("Saving the samples"):
                    saved = apply_edits(client, handle, changes, texts_by_id)
                    report = client.import_samples(handle, changes.new_rows) if changes.new_rows else None
                    refused = refused_rows(changes.new_rows, report.errors, stored_count) if report else []
                    st.session_state["samples_pending"] = refused
                    st.session_state["samples_edit_problems"] = {
                        int(p["id"]): p["problem"] for p in saved.problems
                    }
                    st.session_state.pop(editor_key, None)  # the saved rows now come from the server
                    message, ok = save_message(saved, report.stored if report else 0, refused)
                    st.session_state["samples_flash" if ok else "samples_flash_warning"] = message
                    st.rerun()

    if (editable or labelling) and traits:
        st.markdown("**Add one sample**" if editable else "**Add a label** (sent as score feedback)")
        # The trait is picked outside the form, so the quality slider can name that trait's poles.
        trait_one = st.selectbox(
            "Trait", trait_keys, format_func=lambda k: trait_names.get(k, k), key="one_trait"
        )
        with st.form("add_sample", clear_on_submit=True):
            a1, a2 = st.columns([1, 3])
            pole_trait = next(t for t in traits if t.key == trait_one)
            quality_one = quality_slider(a1, pole_trait, key="one_quality")
            text_one = a2.text_area("Text", height=110)
            if st.form_submit_button("Add sample" if editable else "Send label"):
                if not text_one.strip():
                    st.warning("Enter the sample's text first.")
                else:
                    try:
                        with guard("Adding the sample"):
                            label = {"trait": trait_one, "text": text_one, "quality": quality_one}
                            result = add_labels(client, model, [label])
                            st.session_state["samples_flash"] = result.message
                            st.rerun()
                    except LabelsRefused as refused:
                        st.warning(str(refused))


with import_tab:
    sample_import_section(client, handle, traits, editable)

with export_tab:
    st.caption("Every sample of the model (with the provenance filter above), as CSV or JSONL.")
    if st.button("Prepare export", key="samples_export"):
        with guard("Exporting samples"):
            everything = [s.model_dump(mode="json") for s in client.list_samples(handle, provenance=prov_arg)]
            st.session_state["samples_export_rows"] = everything
    exported = st.session_state.get("samples_export_rows")
    if exported is not None:
        st.write(f"{len(exported)} sample(s).")
        name = handle.replace(".", "_")
        e1, e2 = st.columns(2)
        e1.download_button("Download CSV", to_csv(exported), f"{name}_samples.csv", "text/csv")
        e2.download_button("Download JSONL", to_jsonl(exported), f"{name}_samples.jsonl", "application/jsonl")

with synth_tab:
    st.caption(
        "`from_traits` writes cold-start examples from the trait names and labels; `diversify` makes "
        "voice-preserving variations of existing samples (needs samples for each trait)."
    )
    s1, s2 = st.columns(2)
    synth_type = s1.radio("Kind", ["from_traits", "diversify"], key="synth_type", horizontal=True)
    synth_effort = s2.select_slider("Effort", DISCOVER_EFFORTS, value="medium", key="synth_effort")
    if st.button("Synthesize", disabled=not editable, key="synth_go", type="primary"):
        with guard("Starting synthesis"):
            start_run(
                client, handle, "synthesize", lambda: client.synthesize(handle, synth_type, synth_effort)
            )
            st.rerun()

with flags_tab:
    flags_panel(backend, client, model)

with disagree_tab:
    disagreements_panel(client, model, traits, editable)
