"""Training: start (effort, re-optimise), live progress, history of versions and operations, metrics."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.evaluation.versions import training_left_out, trait_metrics_frame, uncertain_roc_auc, versions_frame
from app.shell import reads
from app.shell.roles import gate
from app.ui.flash import say_once
from app.ui.graphs import both_embedders_ready, building_note, health
from app.ui.inert import code, escape_md
from app.ui.navigation import switch_to
from app.ui.widgets import (
    guard,
    open_model_page,
    operation_caption,
    record_progress,
    watched_steps,
    when,
)
from core.contract import TRAIN_EFFORTS
from core.model_states import can

OOF = "out-of-fold: each sample scored by a fit that did not see it"
METRIC_HEADERS = {
    "roc_auc": ("ROC AUC (out-of-fold)", f"ROC AUC, {OOF}"),
    "accuracy": ("accuracy (out-of-fold)", f"Share of samples on their pole's side of 0.5, {OOF}"),
    "calibration_error": ("calibration error (out-of-fold)", f"ECE over 10 score bins, {OOF}"),
    "calibration_slope": (
        "calibration slope (out-of-fold)",
        f"1 is calibrated, above 1 the scores sit too close to 0.5, {OOF}; blank where the poles never "
        "overlap (every positive scored above every negative): then no slope is measured",
    ),
    "discrimination": ("discrimination (out-of-fold)", f"Mean score of positives − negatives, {OOF}"),
    "explained_variance": ("explained variance", "Share of the samples' variance along the trait's axis"),
}


def oof_note(metrics: dict[str, Any]) -> str:
    """Says how the metrics were measured: they are held-out estimates, not scores on the training data."""
    folds = sorted({int(m.get("cv_folds") or 0) for m in (metrics.get("traits") or {}).values()} - {0})
    how = f"{'/'.join(map(str, folds))}-fold cross-validation" if folds else "cross-validation"
    return (
        f"Metrics are **out-of-fold** ({how}): every sample is scored by a fit trained without it, so they "
        "estimate how the version scores new texts. A trait with one sample on a pole, or zero-shot, has no "
        "folds: its figures are in-sample."
    )


def start_training(effort: str, reoptimize: bool) -> None:
    """Start a training (a retune when `reoptimize`), logged for this session, and draw the page again."""
    with guard("Starting training"):
        ref = client.train(handle, effort, reoptimize_params=reoptimize)
        log = st.session_state.setdefault("operations_log", [])
        log.append(
            {
                "model": handle,
                "kind": "retune" if reoptimize else "train",
                "effort": effort,
                "run_id": ref.run_id,
                "state after call": ref.state,
            }
        )
        if ref.run_id is None:
            st.session_state["training_flash"] = "Already trained: nothing to do."
        st.rerun()


backend, client, model, handle, busy = open_model_page("Training")
say_once("training_flash")
state = model.state
ready = state == "ready"

with st.container(border=True):
    st.subheader("Start a run")
    graphs = health(client)
    if building := building_note(graphs):
        st.info(building)
    with guard("Listing versions"):
        better = ready and both_embedders_ready(graphs, reads.versions(client, handle), model.version_no)
    t1, t2 = st.columns([2, 1])
    effort = t1.select_slider(
        "Effort",
        TRAIN_EFFORTS,
        value="medium",
        key="train_effort",
        help="How much of the parameter search to run: low is quickest, max is most thorough.",
    )
    reopt = t2.checkbox(
        "Re-optimise parameters",
        key="train_reopt",
        disabled=not ready,
        help="A ready model trains again only with a fresh parameter search (a new version).",
    )
    # Labels buffered on a trained model (the Label page's, score feedback) wait for its next version: a
    # ready model trains them in only through a training with a fresh parameter search (docs/api/runs.md),
    # so the button says what it does rather than asking for a tick named for something else.
    waiting = (model.buffered_feedback or 0) if ready else 0
    label = "Re-optimise (new version)" if ready and reopt else "Train"
    if waiting:
        label = "Train the waiting label" if waiting == 1 else f"Train the {waiting:,} waiting labels"
    if state == "draft" and model.version_no:  # a reopened draft: its edits become the next version
        label = f"Train v{model.version_no + 1}"
    retune = bool(ready and (reopt or waiting))
    can_start = can("train", state) or (can("retune", state) and retune)
    if waiting:
        st.caption(
            f"{waiting:,} label(s) given since v{model.version_no or 0:d} wait for the next version: the "
            "button trains them in, with a fresh parameter search. Labels of a text still wanting votes, "
            "proposals no reviewer accepted yet, and labels of a trait with one pole only wait on."
        )
    elif ready and not reopt:
        st.caption(
            "This model is trained. Tick *Re-optimise parameters* to search again and make a new version, "
            "or press *Edit the data* on the **Samples** page to change its samples first."
        )
    if state == "archived":
        st.caption("Archived models cannot be trained.")
    may_train = gate(backend, "manage", "Training")
    if better:  # the owner's choice: no version is made unasked
        st.info(
            f"mpnet-base's int8 graph is built now: v{model.version_no or 0:d} trained on e5-small alone "
            "while it was being built. Training again on both embedders makes a new version."
        )
        if st.button("Train on both embedders now", disabled=busy or not may_train, key="train_both"):
            start_training(effort, reoptimize=True)
    if st.button(label, type="primary", disabled=busy or not can_start or not may_train, key="train_go"):
        start_training(effort, reoptimize=retune)

op = model.last_operation
if op and not busy:
    st.subheader("Last operation")
    text = operation_caption(op)
    if op.status == "failed":
        st.error(f"{text}: {code(op.error_code or 'error')} {escape_md(op.error_message or '')}")
    else:
        st.write(
            f"{text} · started {escape_md(when(op.started_at))} · finished {escape_md(when(op.finished_at))}"
        )
    st.caption(f"run {code(str(op.run_id))}")
    if op.run_id in {r["run_id"] for r in st.session_state.get("operations_log", [])}:
        record_progress(op)  # a run started here that ended between two polls still ends on its outcome
    steps = watched_steps(op.run_id)
    if steps:
        st.caption("Progress watched: " + " → ".join(steps))

st.subheader("Versions")
versions = []
with guard("Listing versions"):
    versions = reads.versions(client, handle)
if versions:
    st.dataframe(versions_frame(versions), hide_index=True, width="stretch")
else:
    st.caption("No versions yet.")

log = [r for r in st.session_state.get("operations_log", []) if r["model"] == handle]
if log:
    with st.expander(f"Runs started in this session ({len(log):,})"):
        st.dataframe(log, hide_index=True, width="stretch")

if model.version_no:
    st.subheader(f"Per-trait metrics of the active version v{model.version_no:d}")
    with guard("Reading the active version"):
        active = client.get_version(handle, model.version_no)
        frame = trait_metrics_frame(active.metrics)
        if frame.empty:
            st.caption("The service reported no per-trait metrics.")
        else:
            st.dataframe(
                frame,
                hide_index=True,
                width="stretch",
                column_config={
                    c: st.column_config.NumberColumn(label, format="%.3f", help=helptext)
                    for c, (label, helptext) in METRIC_HEADERS.items()
                },
            )
        metrics = active.metrics
        neutral, contested = training_left_out(metrics)
        if neutral:
            st.caption(neutral)
        if contested:  # a disagreement is not a neutral label: said apart, with the way to settle it
            st.warning(contested, icon=":material/call_split:")
            # Settling is a reviewer's: an annotator is told so, never offered a button that leads to none.
            if gate(backend, "review", "Settling the contested texts") and st.button(
                "Settle the contested texts", key="training_settle"
            ):
                st.session_state["samples_tab"] = "Disagreements"  # the Samples page's tab set (its key)
                switch_to("samples")
        st.caption(oof_note(metrics))
        if shaky := uncertain_roc_auc(metrics):
            st.warning(shaky, icon=":material/help:")
        st.caption(
            f"{escape_md(active.embedder_words or 'embedder not recorded')} · "
            f"effort {escape_md(str(metrics.get('effort')))} · "
            f"{metrics.get('duration_s', 0) or 0:.1f} s"
        )
