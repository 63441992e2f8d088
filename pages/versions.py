"""Versions: list with tags; tag and untag; compare two versions side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.evaluation.versions import (
    delta_color,
    evaluation_points,
    metrics_diff_frame,
    per_trait_summary,
    probe_scores,
    signed,
    versions_frame,
)
from app.evaluation.view import evaluation_section
from app.shell import reads
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.widgets import guard, open_model_page
from core.charts import metrics_across_versions, score_bars_compare
from core.client import Version
from core.timeline import history_timeline

backend, client, model, handle, _ = open_model_page("Versions")
say_once("versions_flash")

versions: list[Version] = []
with guard("Listing versions"):
    versions = reads.versions(client, handle)
if not versions:
    st.info("No versions yet: train the model on the **Training** page.")
    st.stop()

st.dataframe(
    versions_frame(versions),
    hide_index=True,
    width="stretch",
    column_config={
        "calibration (out of fold)": st.column_config.TextColumn(
            help="Each version's own, from scores of samples its folds did not train on (mean over traits). "
            "ECE: the mean gap between a score and the share of positives scored so (0 is calibrated: 0.8 "
            "means 80 %). Slope: 1 is calibrated, above 1 the scores sit too close to 0.5, below 1 too far "
            "from it; none where every positive scored above every negative."
        )
    },
)
with st.container():  # always there: the boxes below keep their place whether it says something or not
    serving = next((v for v in versions if v.version_no == model.version_no), None)
    # An embedder training chose: why, in full (the table's cell cuts a reason short).
    if serving is not None and serving.embedder is not None and serving.embedder.candidates is not None:
        st.caption(f"v{serving.version_no:d} (active) {escape_md(serving.embedder_words)}")
# The chart and the history sit in containers that are always there: a run's end (a second version, a second
# evaluated one) changes what they hold, never where the Tag name and probe boxes below are (a box moved to
# another place is drawn anew, losing what was typed but not yet sent).
with st.container():
    if len(versions) > 1:
        with guard("Charting metrics"):
            # Each version's training AUC is measured out of fold on its own samples: it rises as samples are
            # added or cleaned without any version being better. When versions were evaluated on the held-out
            # set, that is what the chart shows; otherwise it says what the training AUC is.
            evaluated = evaluation_points(client, handle, versions)
            if len(evaluated) > 1:
                title = "ROC AUC on the evaluation set (held-out items): higher is better"
                st.plotly_chart(metrics_across_versions(evaluated, "roc_auc", title=title), width="stretch")
            else:
                title = "Training ROC AUC (out of fold, each version on its own samples): not a comparison"
                st.plotly_chart(metrics_across_versions(versions, "roc_auc", title=title), width="stretch")
                st.caption(
                    "Each version's AUC comes from its own training samples, so a rise can mean easier or "
                    "cleaner samples, not a better model. Evaluate two or more versions on the evaluation "
                    "set (below) to chart what decides between them."
                )

with st.container(), guard("Loading the history"):
    history = client.history(handle)
    if history:
        with st.expander("History: when each version was active, where each tag pointed"):
            st.plotly_chart(history_timeline(history), width="stretch", key="history_timeline")

tags = sorted({t for v in versions for t in v.tags})
with st.container(border=True):
    st.subheader("Tags")
    g1, g2 = st.columns(2)
    with g1.form("tag_form", clear_on_submit=True):
        # Any version, the active one first.
        choices = sorted((v.version_no for v in versions), key=lambda n: (n != model.version_no, -n))
        t1, t2 = st.columns([1, 2])
        tagged_no = t1.selectbox(
            "Version",
            choices,
            format_func=lambda n: f"v{n}" + (" (active)" if n == model.version_no else ""),
            key="tag_version_pick",
        )
        tag = t2.text_input("Tag name", placeholder="prod")
        submitted = st.form_submit_button("Tag")
        if submitted and not tag.strip():
            st.warning("Enter a tag name first, for example `prod`.", icon=":material/edit:")
        elif submitted:
            with guard("Tagging"):
                active = tagged_no == model.version_no
                result = client.tag_version(handle, tag.strip(), None if active else tagged_no)
                st.session_state["versions_flash"] = f"Tagged v{result.version_no} as `{result.tag}`."
                st.rerun()
    with g2.form("untag_form"):
        doomed = st.selectbox("Remove a tag", tags, index=None, placeholder="choose a tag")
        if st.form_submit_button("Remove tag", disabled=not tags):
            with guard("Removing the tag"):
                if doomed:
                    client.untag_version(handle, doomed)
                    st.session_state["versions_flash"] = f"Removed tag `{doomed}`."
                    st.rerun()

labels = [v.label + (f" ({', '.join(v.tags)})" if v.tags else "") for v in versions]
refs = [v.label for v in versions]
# The evaluation set decides between versions (held-out texts, paired tests), so it comes first; the probe
# comparison below scores texts that are mostly training samples, and says so.
# In a container of its own: an evaluation's end fills it (its results, a threshold box) while the probe box
# below keeps its place.
with st.container():
    evaluation_section(client, handle, refs, labels, busy=model.state == "busy")

st.divider()
st.subheader("Probe comparison on training samples")
st.caption(
    "How scores moved between two versions on probe texts. By default the probes are the model's own "
    "samples, which the versions were trained on: this shows what changed, not which version is better. "
    "Use the evaluation-set comparison above to choose."
)
c1, c2 = st.columns(2)
ia = c1.selectbox(
    "A", range(len(refs)), index=min(1, len(refs) - 1), format_func=lambda i: labels[i], key="cmp_a"
)
ib = c2.selectbox("B", range(len(refs)), index=0, format_func=lambda i: labels[i], key="cmp_b")


def _default_probes() -> str:
    """A few of the model's samples per trait, else a generic set."""
    texts: list[str] = []
    try:
        seen: dict[str, int] = {}
        # From the first samples only: walking all of a 10,000-sample model's pages (one trait never
        # reaches 16 texts) cost the page 10 s.
        for s in reads.samples_head(client, handle, 400):
            if seen.get(s.trait, 0) < 4:
                texts.append(s.text.replace("\n", " "))
                seen[s.trait] = seen.get(s.trait, 0) + 1
            if len(texts) >= 16:
                break
    except Exception:  # noqa: BLE001 - probes are a convenience; fall back to generic texts
        texts = []
    return "\n".join(texts) or "\n".join(
        [
            "Thank you for your message. I will reply in detail by Friday.",
            "lol that was wild, see u later!!",
            "The quarterly report shows a modest increase in revenue.",
            "This is the worst service I have ever had.",
        ]
    )


probe_key = f"probes_{handle}"
if probe_key not in st.session_state:
    st.session_state[probe_key] = _default_probes()
st.text_area(
    "Probe texts (one a line; by default training samples), scored locally with both versions' snapshots",
    key=probe_key,
    value=st.session_state[probe_key],  # also its default: a browser drawing it afresh shows the probes
    height=160,
)

if st.button("Compare on the probes", key="cmp_go", disabled=ia == ib):
    with guard("Comparing versions"), st.spinner("Loading snapshots and scoring the probe set…"):
        from app.shell import engine_cache  # on use: the engine's imports would slow every first paint

        va = client.get_version(handle, refs[ia])
        vb = client.get_version(handle, refs[ib])
        texts = [t.strip() for t in st.session_state[probe_key].splitlines() if t.strip()]
        probe = pd.DataFrame()
        traits_a = traits_b = []
        if va.snapshot and vb.snapshot and texts:
            scorer_a = engine_cache.scorer(va.snapshot)
            scorer_b = engine_cache.scorer(vb.snapshot)
            probe = probe_scores(scorer_a, scorer_b, texts)
            traits_a, traits_b = scorer_a.traits, scorer_b.traits
        st.session_state["cmp_result"] = {
            "handle": handle,
            "a": refs[ia],
            "b": refs[ib],
            "metrics_a": va.metrics,
            "metrics_b": vb.metrics,
            "embedders": (va.embedder_words, vb.embedder_words),
            "embedder_ids": (va.embedder_id, vb.embedder_id),
            "probe": probe,
            "traits": [*traits_b, *traits_a],
            "snapshots": bool(va.snapshot and vb.snapshot),
        }
if ia == ib:
    st.caption("Pick two different versions.")

cmp = st.session_state.get("cmp_result")
if cmp and cmp["handle"] == handle:
    a, b = cmp["a"], cmp["b"]
    st.markdown(f"#### Probes (training samples): A = {escape_md(a)} · B = {escape_md(b)}")
    embedder_a, embedder_b = cmp.get("embedders", ("", ""))
    # Said when the embedders differ, not their words (the same embedder chosen again reads otherwise): each
    # side is scored with its own embedder, as the service scores it.
    if len(set(cmp.get("embedder_ids", (embedder_a, embedder_b)))) > 1:
        st.caption(f"A {escape_md(embedder_a)} · B {escape_md(embedder_b)}")
    diff = metrics_diff_frame(cmp["metrics_a"], cmp["metrics_b"])
    # Colours from the numbers; the se column shown as text, since the grid draws a missing value as "None"
    # whatever the Styler's format says.
    colours = pd.DataFrame(list(diff.apply(delta_color, axis=1)), index=diff.index, columns=diff.columns)
    shown = diff.assign(se=[("—" if v is None or pd.isna(v) else f"±{v:.3f}") for v in diff["se"]])
    st.dataframe(
        shown.style.apply(lambda _: colours, axis=None).format(
            {"A": "{:.3f}", "B": "{:.3f}", "B − A": signed}, na_rep="—"
        ),
        hide_index=True,
        width="stretch",
        column_config={"se": st.column_config.Column("± se", help="standard error of B − A")},
    )
    st.caption(
        "Coloured only where B − A exceeds twice its standard error (from each version's sample counts; "
        "one point for metrics without one): smaller differences are within the noise of training."
    )
    probe = cmp["probe"]
    if not cmp["snapshots"]:
        st.warning(
            "Snapshots are not readable with this key (scoring scope): probe scores need an authoring key."
        )
    elif probe.empty:
        st.caption("No probe texts.")
    else:
        st.markdown("**Per-trait differences over the probe set**")
        st.dataframe(
            per_trait_summary(probe).style.format(
                {"mean Δ": "{:+.3f}", "mean |Δ|": "{:.3f}", "max |Δ|": "{:.3f}"}
            ),
            hide_index=True,
            width="stretch",
        )
        probe_texts = list(dict.fromkeys(probe["text"]))
        pick = st.selectbox(
            "Probe text",
            range(len(probe_texts)),
            format_func=lambda i: probe_texts[i][:120],
            key="cmp_probe_pick",
        )
        chosen = probe[probe["text"] == probe_texts[pick]]
        scores_a = {r.trait: r.A for r in chosen.itertuples() if pd.notna(r.A)}
        scores_b = {r.trait: r.B for r in chosen.itertuples() if pd.notna(r.B)}
        left, right = st.columns(2)
        with left:
            st.plotly_chart(
                score_bars_compare(
                    scores_a, scores_b, labels=(a, b), traits=cmp["traits"], title="This text"
                ),
                width="stretch",
                key="cmp_chart_text",
            )
        with right:
            mean_a = probe.groupby("trait", sort=False)["A"].mean().dropna().to_dict()
            mean_b = probe.groupby("trait", sort=False)["B"].mean().dropna().to_dict()
            st.plotly_chart(
                score_bars_compare(
                    mean_a, mean_b, labels=(a, b), traits=cmp["traits"], title="Mean over probes"
                ),
                width="stretch",
                key="cmp_chart_mean",
            )
        with st.expander("All probe scores"):
            st.dataframe(
                probe.style.format({"A": "{:.3f}", "B": "{:.3f}", "B − A": "{:+.3f}"}, na_rep="—"),
                hide_index=True,
                width="stretch",
            )
