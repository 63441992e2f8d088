"""Samples: a trait's samples paged from the server; add, import, export, synthesize, flags."""

from __future__ import annotations

import streamlit as st

from app.labelling.agreement import disagreements_panel
from app.labelling.feedback import buffered_feedback
from app.labelling.labels import LabelsRefused, add_labels, labelling_note, retrain_at
from app.samples.files import to_csv, to_jsonl
from app.samples.flags import flags_tab as flags_panel
from app.samples.grid import sample_grid
from app.samples.importing import sample_import_section
from app.samples.quality_input import quality_slider
from app.shell import reads
from app.shell.roles import allows, gate, refusal
from app.ui.flash import say_once
from app.ui.paging import paged, pager_buttons
from app.ui.reopen import reopen_offer, reopened_note
from app.ui.run_summary import show_summary, start_run, summarise
from app.ui.widgets import guard, is_editable, open_model_page
from core.client import Trait
from core.contract import DISCOVER_EFFORTS, PROVENANCES, SYNTH_TYPES  # synthesis takes the discovery efforts

PROVENANCE_FILTER = ["(any)", *PROVENANCES]
TABS_KEY, BROWSE = "samples_tab", "Browse & add"  # the tab set's key and the tab that lists samples

backend, client, model, handle, busy = open_model_page("Samples")
editable = is_editable(model)
manage = allows(backend.key, "manage")  # imports, synthesis, editing anyone's samples (docs/api.md "Roles")
labelling = model.state == "ready" and not model.zero_data_retention  # labels go in as feedback
# The notes above the tabs sit in one container that is always there: a run's end brings the reopen offer
# and the labelling note (busy -> ready), and tabs moved to another place are drawn anew, their boxes losing
# what was typed but not yet sent.
with st.container():
    say_once("samples_flash")
    say_once("samples_flash_info", st.info)
    if not busy and manage:
        reopen_offer(client, model, "samples_flash", "samples_reopen")
    if (
        not editable
        and not busy
        # How many labels wait is said once, by the buffered feedback below (read when drawn; the model
        # read at the top of the page can be a label or a withdrawal behind it).
        and (note := labelling_note(model, retrain_at(client, handle) if labelling else None, count=False))
    ):
        st.info(note, icon=":material/school:" if labelling else ":material/block:")
    reopened_note(model)
    if model.zero_data_retention:
        st.caption("Zero data retention is on: samples are purged when a training completes.")
    say_once("samples_flash_warning", st.warning)
    with guard("Reading what synthesis added"):
        show_summary(summarise(client, model, "synthesize"), "synthesize")
# A link from a run's summary opens the samples it added (?provenance=…) on the tab that lists them; the
# filter and the tab stay the user's after.
if (linked := st.query_params.get("provenance")) in PROVENANCES:
    st.session_state["samples_provenance"] = linked
    st.session_state[TABS_KEY] = BROWSE
    del st.query_params["provenance"]

traits: list[Trait] = []
with guard("Listing traits"):
    traits = reads.traits(client, handle)
trait_keys = [t.key for t in traits]
trait_names = {t.key: t.name for t in traits}

# The tabs keep the one the user is on (key, state tracked): a message shown once or the reopen offer above
# them moves the tab set, which the browser would otherwise draw anew on its first tab, and the Import
# tab's pickers of a file picked then sent their first options back as the analyst's choices.
browse_tab, import_tab, export_tab, synth_tab, flags_tab, disagree_tab = st.tabs(
    [BROWSE, "Import", "Export", "Synthesize", "Flags", "Disagreements"],
    key=TABS_KEY,
    on_change="rerun",
)

with browse_tab:
    f1, f2, f3 = st.columns([2, 2, 1])
    trait_pick = f1.selectbox(
        "Trait",
        ["(all)", *trait_keys],
        key="samples_trait",
        format_func=lambda k: k if k == "(all)" else f"{trait_names.get(k, k)} ({k})",
    )
    # A linked filter (seeded above) is also the box's own default: a box drawn afresh shows it, not "(any)".
    linked_filter = st.session_state.get("samples_provenance")
    provenance = f2.selectbox(
        "Provenance",
        PROVENANCE_FILTER,
        index=PROVENANCE_FILTER.index(linked_filter) if linked_filter in PROVENANCE_FILTER else 0,
        key="samples_provenance",
    )
    limit = f3.selectbox("Per page", [25, 50, 100, 250, 500], index=2, key="samples_limit")
    trait_arg = None if trait_pick == "(all)" else trait_pick
    prov_arg = None if provenance == "(any)" else provenance
    with guard("Listing samples"):
        page = paged(
            "samples_pager",
            (handle, trait_arg, prov_arg, limit),
            lambda cursor: client.list_samples_page(handle, trait_arg, prov_arg, limit, cursor),
        )
        # The pager above the grid, not under it: under it, it followed the grid's polling fragment, and a
        # save that reran the page while the fragment ran could leave the page without it.
        pager_buttons("samples_pager", page)
        sample_grid(client, handle, page, trait_keys, trait_arg, editable and manage)
    if editable and not manage:
        gate(backend, "manage", "Editing the samples in the grid")

    if (editable or labelling) and traits and gate(backend, "label", "Adding a label"):
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
        if labelling:
            buffered_feedback(client, handle, backend.key, auto_retrain=model.auto_retrain)


with import_tab:
    # A file's rows are its raters' votes, not the importer's: importing is the owner's.
    sample_import_section(client, handle, traits, editable and gate(backend, "manage", "Importing a file"))

with export_tab:
    st.caption("Every sample of the model (with the provenance filter above), as CSV or JSONL.")
    if st.button("Prepare export", key="samples_export"):
        with guard("Exporting samples"):
            everything = [s.model_dump(mode="json") for s in client.list_samples(handle, provenance=prov_arg)]
            st.session_state["samples_export_rows"] = everything
    exported = st.session_state.get("samples_export_rows")
    if exported is not None:
        st.write(f"{len(exported):,} sample(s).")
        name = handle.replace(".", "_")
        e1, e2 = st.columns(2)
        e1.download_button("Download CSV", to_csv(exported), f"{name}_samples.csv", "text/csv")
        e2.download_button("Download JSONL", to_jsonl(exported), f"{name}_samples.jsonl", "application/jsonl")

with synth_tab:
    st.caption(
        "`from_traits` picks real texts from the model's pool that lie most clearly on each pole (never a "
        "labelled or evaluation text); without a pool it writes descriptions of the poles from the trait "
        "names and labels, not real texts, so add unlabelled texts to the pool first. `diversify` picks the "
        "pool texts nearest each sample on its pole, or without a pool makes light variations of the "
        "samples (needs samples for each trait). Review what it adds before training."
    )
    s1, s2 = st.columns(2)
    synth_type = s1.radio("Kind", SYNTH_TYPES, key="synth_type", horizontal=True)
    synth_effort = s2.select_slider("Effort", DISCOVER_EFFORTS, value="medium", key="synth_effort")
    may_synthesize = gate(backend, "manage", "Synthesizing samples")
    if st.button("Synthesize", disabled=not (editable and may_synthesize), key="synth_go", type="primary"):
        with guard("Starting synthesis"):
            start_run(
                client, handle, "synthesize", lambda: client.synthesize(handle, synth_type, synth_effort)
            )
            st.rerun()

with flags_tab:
    flags_panel(backend, client, model)

with disagree_tab:
    disagreements_panel(client, model, traits, editable, refusal(backend.key, "review", "Settling a text"))
