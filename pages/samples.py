"""Samples: a trait's samples paged from the server; add, import, export, synthesize, flags."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import reads
from app.flag_fixes import flag_fixes
from app.labels import LabelsRefused, add_labels, labelling_note
from app.paging import paged, pager_buttons
from app.records import as_dict
from app.run_summary import show_summary, start_run, summarise
from app.sample_io import parse_samples, refused_rows, to_csv, to_jsonl, unknown_trait_hint
from app.widgets import guard, is_editable, open_model_page

PROVENANCES = ["(any)", "authored", "synthesized", "discovered", "feedback"]
SYNTH_EFFORTS = ["low", "medium", "high", "xhigh", "max"]

backend, client, model, handle, busy = open_model_page("Samples")
editable = is_editable(model)
labelling = model.get("state") == "ready" and not model.get("zero_data_retention")  # labels go in as feedback
if not editable and not busy and (note := labelling_note(model)):
    st.info(note, icon=":material/school:" if labelling else ":material/block:")
if model.get("zero_data_retention"):
    st.caption("Zero data retention is on: samples are purged when a training completes.")
if flash := st.session_state.pop("samples_flash", None):
    st.success(flash)
if warning := st.session_state.pop("samples_flash_warning", None):
    st.warning(warning)
with guard("Reading what synthesis added"):
    show_summary(summarise(client, model, "synthesize"), "synthesize")
# A link from a run's summary opens the samples it added (?provenance=…); the filter stays the user's after.
if (linked := st.query_params.get("provenance")) in PROVENANCES:
    st.session_state["samples_provenance"] = linked
    del st.query_params["provenance"]

traits: list[dict] = []
with guard("Listing traits"):
    traits = reads.traits(client, handle)
trait_keys = [t["key"] for t in traits]
trait_names = {t["key"]: t["name"] for t in traits}

browse_tab, import_tab, export_tab, synth_tab, flags_tab = st.tabs(
    ["Browse & add", "Import", "Export", "Synthesize", "Flags"]
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
        rows = [as_dict(s) for s in page.items]
        # One editor state per page of data: rows added on one page must not reappear on another.
        pager_state = st.session_state["samples_pager"]
        editor_key = f"samples_editor_{abs(hash((pager_state['filters'], pager_state['stack'][-1])))}"
        frame = pd.DataFrame(
            [
                {
                    "id": r.get("id"),
                    "trait": r.get("trait"),
                    "text": r.get("text"),
                    "quality": r.get("quality"),
                    "provenance": r.get("provenance"),
                    "source_url": r.get("source_url"),
                }
                for r in rows
            ],
            columns=["id", "trait", "text", "quality", "provenance", "source_url"],
        )
        # Rows the service refused on the last save stay in the grid below the stored ones, marked with why,
        # so the user fixes them instead of typing them again.
        pending = st.session_state.get("samples_pending", []) if editable else []
        stored_count = len(frame)
        if pending:  # the problem column only while there are refused rows to fix
            frame["problem"] = ""
            frame = pd.concat([frame, pd.DataFrame(pending)], ignore_index=True)
        st.caption(
            "Stored samples are fixed or removed from the Flags tab. "
            + ("Add rows at the bottom of the table and save them." if editable else "")
        )
        # In a form, new rows reach the app together with the save click, never as reruns of their own.
        form = st.form(f"samples_form_{editor_key}", border=False)
        edited = form.data_editor(
            frame,
            key=editor_key,
            hide_index=True,
            width="stretch",
            num_rows="add" if editable else "fixed",
            # The reason first, so it shows beside a refused row even on a narrow screen.
            column_order=["problem", *frame.columns.drop("problem")] if pending else None,
            disabled=["id", "provenance", *(["problem"] if pending else [])] if editable else True,
            column_config={
                "trait": st.column_config.SelectboxColumn("trait", options=trait_keys, required=True),
                "text": st.column_config.TextColumn("text", width="large", required=True),
                "quality": st.column_config.NumberColumn("quality", min_value=0.0, max_value=1.0, step=0.05),
            },
        )
        save_clicked = form.form_submit_button("Save new rows", disabled=not editable)
        pager_buttons("samples_pager", page)
        new_rows = edited.iloc[stored_count:]  # the refused rows kept from the last save, then added ones
        edits = (st.session_state.get(editor_key) or {}).get("edited_rows") or {}
        changed_stored = {i: e for i, e in edits.items() if int(i) < stored_count}
        if changed_stored:
            st.warning(
                f"{len(changed_stored)} stored row(s) edited: the API cannot change stored samples, so those "
                "edits will not be saved. Add a corrected sample as a new row instead."
            )
        if editable and save_clicked and new_rows.empty and not changed_stored:
            st.info("No new rows to save: add them at the bottom of the table.")
        if editable and save_clicked and not new_rows.empty:
            with guard("Adding samples"):
                payload = [
                    {
                        "trait": r["trait"],
                        "text": r["text"],
                        "quality": r["quality"],
                        "source_url": r["source_url"],
                    }
                    for _, r in new_rows.iterrows()
                ]
                report = client.import_samples(handle, payload)
                refused = refused_rows(payload, report.errors, stored_count)
                st.session_state["samples_pending"] = refused
                st.session_state.pop(editor_key, None)  # the saved rows now come from the server
                message = f"Added {report.stored} sample(s)."
                if refused:
                    st.session_state["samples_flash_warning"] = (
                        (f"{message} " if report.stored else "Nothing was added: ")
                        + f"{len(refused)} row(s) were refused and stay in the grid (at its bottom), marked "
                        "in the *problem* column: fix them and save again. "
                        + "; ".join(r["problem"] for r in refused)
                    )
                else:
                    st.session_state["samples_flash"] = message
                st.rerun()

    if (editable or labelling) and traits:
        with st.form("add_sample", clear_on_submit=True):
            st.markdown("**Add one sample**" if editable else "**Add a label** (sent as score feedback)")
            a1, a2 = st.columns([1, 3])
            trait_one = a1.selectbox("Trait", trait_keys, format_func=lambda k: trait_names.get(k, k))
            quality_one = a1.slider("Quality (0 = negative pole, 1 = positive)", 0.0, 1.0, 1.0, 0.05)
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


def _valid_traits_hint(message: str) -> str:
    """A rejection for an unknown trait names the model's trait keys, so the user can fix the file."""
    if (
        "trait" in message.lower()
        and ("unknown" in message.lower() or "not" in message.lower())
        and trait_keys
    ):
        return f" (this model's trait keys: {', '.join(trait_keys)})"
    return ""


with import_tab:
    st.caption(
        "CSV with a header row `trait,text,quality[,source_url]`, or JSONL with one object a line with the "
        "same fields. `trait` is a trait key (or name); `quality` is 1 for the positive pole, 0 for the "
        "negative. Rows go in batches of 500; identical samples already stored are skipped."
    )
    upload = st.file_uploader("Samples file", type=["csv", "jsonl", "ndjson", "json"], key="samples_upload")
    if upload is not None:
        parsed = parse_samples(upload.name, upload.getvalue())
        for note in parsed.notes:
            st.info(note, icon=":material/info:")
        st.write(f"{len(parsed.rows)} row(s) read, {len(parsed.problems)} unreadable.")
        if not parsed.rows and parsed.problems:  # say why at once, not only in the table of problems
            first = parsed.problems[0]["message"]
            more = f" ({len(parsed.problems) - 1} more line(s) below)" if len(parsed.problems) > 1 else ""
            st.warning(f"Nothing to import: {first}{more}.", icon=":material/warning:")
        if parsed.rows:
            st.dataframe(pd.DataFrame(parsed.rows[:10]), hide_index=True, width="stretch")
        if st.button("Import", type="primary", disabled=not (editable and parsed.rows), key="samples_import"):
            with guard("Importing samples"):
                bar = st.progress(0.0, text="Importing…")

                def _progress(done: int, total: int) -> None:
                    bar.progress(done / total if total else 1.0, text=f"Imported {done} of {total} rows")

                report = client.import_samples(handle, parsed.rows, batch_size=500, progress=_progress)
                bar.progress(1.0, text="Import finished")
                rejected = [
                    {
                        "line": parsed.lines[e.index],
                        "stage": e.stage,
                        "message": e.message + unknown_trait_hint(e.message, trait_keys),
                        "row": str(e.row),
                    }
                    for e in report.errors
                ] + [
                    {"line": p["line"], "stage": "file", "message": p["message"], "row": ""}
                    for p in parsed.problems
                ]
                stored = f"Stored {report.stored} of {len(parsed.rows) + len(parsed.problems)} rows."
                if rejected:  # anything refused is a warning, never a green success
                    st.warning(f"{stored} {len(rejected)} row(s) rejected:")
                    st.dataframe(pd.DataFrame(rejected).sort_values("line"), hide_index=True, width="stretch")
                else:
                    st.success(stored)
        elif parsed.problems and (parsed.rows or len(parsed.problems) > 1):  # one is said above
            st.dataframe(pd.DataFrame(parsed.problems), hide_index=True)

with export_tab:
    st.caption("Every sample of the model (with the provenance filter above), as CSV or JSONL.")
    if st.button("Prepare export", key="samples_export"):
        with guard("Exporting samples"):
            everything = [as_dict(s) for s in client.list_samples(handle, provenance=prov_arg)]
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
    synth_effort = s2.select_slider("Effort", SYNTH_EFFORTS, value="medium", key="synth_effort")
    if st.button("Synthesize", disabled=not editable, key="synth_go", type="primary"):
        with guard("Starting synthesis"):
            start_run(
                client, handle, "synthesize", lambda: client.synthesize(handle, synth_type, synth_effort)
            )
            st.rerun()

with flags_tab:
    st.caption(
        "Computed here with the local engine: each trait is fitted with 5-fold cross-validation and every "
        "sample scored by the fold that did not see it. A positive sample scored below 0.25 (a negative "
        "one above 0.75) is a likely mislabel; a sample far from its trait's other samples is an outlier."
    )
    if st.button("Check samples", key="flags_go"):
        with guard("Checking samples"):
            # Imported on use: the engine (scikit-learn, scipy) would add seconds to every first paint.
            from app import engine_cache
            from app.flags import flag_samples

            bar = st.progress(0.0, text="Reading the samples…")
            everything = [as_dict(s) for s in client.list_samples(handle)]

            def _flag_progress(fraction: float, step: str) -> None:
                bar.progress(fraction, text=step or "Checked.")

            # Stored samples are embedded once per workbench process; zero data retention keeps nothing.
            embedder = engine_cache.embedder(backend.embedder)
            if not model.get("zero_data_retention"):
                embedder = engine_cache.sample_embedder(backend.embedder)
            st.session_state["samples_flags"] = (
                handle,
                len(everything),
                flag_samples(everything, embedder, _flag_progress),
            )
            bar.empty()
    result = st.session_state.get("samples_flags")
    if result and result[0] == handle:
        _, checked, flagged = result
        if flagged:
            st.warning(f"{len(flagged)} flag(s) among {checked} samples.")
            st.dataframe(
                pd.DataFrame(flagged),
                hide_index=True,
                width="stretch",
                # What and why first: at 1280 px the text and the scores would push "why" out of view.
                column_order=("flag", "trait", "why", "text", "quality", "oof_score", "id"),
                column_config={"oof_score": st.column_config.NumberColumn("held-out score", format="%.2f")},
            )
            if editable:
                flag_fixes(client, handle, flagged, "samples_flags")
        else:
            st.success(f"No flags among {checked} samples.")
