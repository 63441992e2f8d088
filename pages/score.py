"""Score: bars per trait, text/plain view, word highlighting, two-text compare, batch file, draft preview."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.samples.import_report import refusals_frame
from app.scoring import perspective_migration
from app.scoring.demo import (
    ACTIVE,
    decision_words,
    default_version,
    score_meaning,
    scored_by,
    version_options,
)
from app.scoring.demo import version_arg as chosen_version
from app.shell import reads
from app.ui.inert import escape_md
from app.ui.table_upload import nothing_read, pick_text_column, table_upload
from app.ui.widgets import guard, open_model_page
from core.charts import score_bars, score_bars_compare
from core.client import Version
from core.spreadsheet import guard_cell
from core.tables import column_texts

backend, client, model, handle, _ = open_model_page("Score")
has_version = bool(model.version_no)

listed: list[Version] = []
if has_version:
    with guard("Listing versions"):
        listed = reads.versions(client, handle)
options = version_options(listed)
version_choice = None
# The picker's place is kept while the model has no version, so the rerun that brings the first version (the
# page's own, when the training it watches ends) moves nothing below it: a text box moved to another place is
# drawn anew, empty, losing what was pasted or typed but not yet sent (a first visit's demo model trains).
with st.container():
    if has_version:
        # The `demo` tag when a version has it (what the Demo page shows too), else the active version.
        if (
            st.session_state.get("score_version_of") != handle
            or st.session_state.get("score_version") not in options
        ):
            st.session_state["score_version"] = default_version(listed)
        st.session_state["score_version_of"] = handle
        version_choice = st.selectbox(
            "Version",
            options,
            key="score_version",
            format_func=lambda o: f"{o} (v{model.version_no})" if o == ACTIVE else o,
        )
version_arg = None if version_choice is None else chosen_version(version_choice)

# Keyed: the tab stays open when a training here gives the model its first version (a Version picker then
# appears above the tabs, which would otherwise make them a new widget, back on the first tab).
single, compare, batch, preview, migrate = st.tabs(
    ["Score a text", "Compare two texts", "Batch file", "Local preview", "From Perspective logs"],
    key="score_tabs",
)

with single:
    with st.container():  # kept when the note goes, like the picker's place above
        if not has_version:
            st.info(
                "This model has no trained version yet: use **Local preview** to try its current samples."
            )
    text = st.text_area("Text", key="score_text", height=150, placeholder="Paste or type a text to score…")
    explain = st.checkbox("Explain (per-word contributions)", key="score_explain")
    if st.button("Score", type="primary", key="score_go", disabled=not has_version):
        with guard("Scoring"):
            result = client.score(handle, text, version=version_arg, explain=explain)
            plain = client.score_text(handle, text, version=version_arg)
            st.session_state["score_result"] = (handle, text, result, plain)
    stored = st.session_state.get("score_result")
    if stored and stored[0] == handle:
        _, scored_text, result, plain = stored
        st.markdown(f"**Scored by {escape_md(scored_by(result))}**")
        st.plotly_chart(score_bars(result), width="stretch", key="score_chart")
        if decided := decision_words(result):  # a threshold above 0.5 decides otherwise than the bar's colour
            st.markdown(decided)
        st.caption(score_meaning(result))
        with st.expander("text/plain view", expanded=False):
            st.code(plain, language=None)
        if result.explanation:
            names = {s.trait: s.name or s.trait for s in result.scores}
            key = st.selectbox(
                "Highlight words for",
                list(result.explanation),
                format_func=lambda k: names.get(k, k),
                key="score_explain_trait",
            )
            negative, positive = result.labels()[key]
            from app.scoring.preview import (
                highlight_html,  # on use: its module loads the engine (scikit-learn)
            )

            st.html(highlight_html(scored_text, result.explanation.get(key) or [], positive, negative))

with compare:
    c1, c2 = st.columns(2)
    text_a = c1.text_area("Text A", key="cmp_text_a", height=140)
    text_b = c2.text_area("Text B", key="cmp_text_b", height=140)
    if st.button("Compare", key="cmp_texts_go", disabled=not has_version):
        with guard("Comparing"):
            st.session_state["cmp_texts"] = (
                handle,
                client.compare(handle, text_a, text_b, version=version_arg),
            )
    stored_cmp = st.session_state.get("cmp_texts")
    if stored_cmp and stored_cmp[0] == handle:
        cmp = stored_cmp[1]
        st.plotly_chart(score_bars_compare(cmp, labels=("A", "B")), width="stretch", key="cmp_texts_chart")
        st.dataframe(
            pd.DataFrame([d.model_dump(mode="json") for d in cmp.difference]).rename(
                columns={"delta": "B − A"}
            ),
            hide_index=True,
            width="stretch",
        )

with batch:
    st.caption(
        "A file of texts (CSV, TSV, TXT, JSON or JSONL): the texts of the column picked (`text`, else the "
        "one of the longest strings) are scored 100 at a time; the download keeps the file's columns beside "
        "the scores."
    )
    read = table_upload("File of texts", "batch_upload")
    table = read[1] if read is not None else None
    column = pick_text_column(table, "batch_text_col") if table is not None else None
    if table is not None and st.button("Score file", key="batch_go", disabled=not has_version):
        with guard("Batch scoring"):
            if column is None or not table.rows:
                raise ValueError(nothing_read(table))
            found, refused = column_texts(table, column)
            at, texts = [i for i, _ in found], [text for _, text in found]
            bar = st.progress(0.0, text="Scoring…")
            out = table.frame()
            for start in range(0, len(texts), 100):
                for r in client.score_many(handle, texts[start : start + 100], version=version_arg):
                    for s in r.scores:
                        out.loc[at[start + (r.index or 0)], s.trait] = s.score
                done = min(len(texts), start + 100)
                bar.progress(done / max(len(texts), 1), text=f"Scored {done} of {len(texts)} texts")
            st.session_state["batch_out"] = (handle, out, refused)
    stored_batch = st.session_state.get("batch_out")
    if stored_batch and stored_batch[0] == handle:
        out, unscored = stored_batch[1], stored_batch[2]
        st.dataframe(out, hide_index=True, width="stretch")
        if unscored:
            st.markdown(f"**Rows not scored** ({len(unscored):,})")
            st.dataframe(refusals_frame(unscored), hide_index=True, width="stretch")
        st.download_button(
            "Download scores (CSV)",
            out.map(guard_cell).to_csv(index=False),  # for a spreadsheet: no cell runs as a formula
            f"{handle.replace('.', '_')}_scores.csv",
            "text/csv",
        )

with preview:
    st.caption(
        "Trains the model's current samples here with the local engine (effort *low*) and scores the text, "
        "before any training on the service. Traits without samples on both poles are left out."
    )
    preview_text = st.text_area("Text", key="preview_text", height=120)
    if st.button("Preview", key="preview_go"):
        with guard("Local preview"), st.spinner("Training locally on the current samples…"):
            # Imported on use: the engine (scikit-learn, scipy) would add seconds to every first paint.
            from app.scoring.preview import draft_scorer
            from app.shell import engine_cache

            name = engine_cache.model_embedder(client, model)  # the model's, as the service trains it
            scorer, skipped, fingerprint = draft_scorer(client, handle, engine_cache.embedder(name))
            scores = scorer.score_dicts([preview_text])[0]
            st.session_state["preview_out"] = (
                handle,
                scores,
                scorer.traits,
                skipped,
                scorer.explain(preview_text),
            )
    stored_preview = st.session_state.get("preview_out")
    if stored_preview and stored_preview[0] == handle:
        _, scores, traits, skipped, explanation = stored_preview
        st.plotly_chart(
            score_bars(scores, "Local preview (not a trained version)", traits=traits),
            width="stretch",
            key="preview_chart",
        )
        if skipped:
            st.caption(f"Left out (no samples on one of the poles): {escape_md(', '.join(skipped))}")
        if explanation:
            names = {t.key: t.name for t in traits}
            key = st.selectbox(
                "Highlight words for",
                list(explanation),
                format_func=lambda k: names.get(k, k),
                key="preview_explain_trait",
            )
            from app.scoring.preview import highlight_html

            trait = next(t for t in traits if t.key == key)
            poles = (trait.positive_label, trait.negative_label)
            st.html(highlight_html(preview_text, explanation[key], *poles))

with migrate:
    perspective_migration.render(client, handle)
