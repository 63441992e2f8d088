"""The Versions page's evaluation part: the held-out set, evaluating a version, thresholds from its PR curve,
and two versions side by side on the set. Talks to the service only through core's client."""

from __future__ import annotations

import contextlib
from typing import Any

import pandas as pd
import streamlit as st

from app.evaluation.calibration_note import calibration_note
from app.evaluation.carried_threshold import carried_sentence, carried_threshold, earlier_refs
from app.evaluation.frames import (
    NEUTRAL_METRICS,
    ceiling_sentence,
    comparison_ceiling_sentence,
    comparison_csv,
    comparison_frame,
    comparison_trained_sentence,
    disagreements_frame,
    eval_metrics_frame,
    overlap_note,
    set_counts,
    trained_sentence,
)
from app.evaluation.versions import neutral_note
from app.samples.import_report import refusals_frame
from app.samples.importing import labelled_file
from app.samples.remembered import remember_scale
from app.shell import reads
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.widgets import guard, show_error
from core.client import (
    ApiError,
    Client,
    EvaluationComparison,
    NotFoundError,
    PermissionDeniedError,
    Threshold,
    TraitPrCurve,
)
from core.contract import DISAGREEMENTS
from core.eval_charts import pr_curve_chart, reliability_chart
from core.tables import Refusal

SHOWN_DISAGREEMENTS = 20
EXPORTED_DISAGREEMENTS = DISAGREEMENTS.maximum  # as many as the service returns
# The earlier versions read for a threshold to carry over (one request each, on every rerun of the page).
CARRIED_LOOKBACK = 10


def evaluation_section(client: Client, handle: str, refs: list[str], labels: list[str], busy: bool) -> None:
    st.subheader("Evaluation set")
    st.caption(
        "Labelled held-out texts, never used for training: every version is measured on the same items."
    )
    try:
        summary = client.evaluation_set(handle)
    except PermissionDeniedError:  # a scoring key, or a public model of another namespace
        st.caption(
            "The evaluation set is authoring data: it needs an authoring key of the model's namespace."
        )
        return
    except Exception as exc:  # noqa: BLE001 - shown like every other failed call
        show_error(exc, "Reading the evaluation set")
        return
    if summary.traits:
        st.caption(set_counts(summary))
    _upload(client, handle)
    if not summary.total:
        return
    ev1, ev2 = st.columns([3, 1])
    pick = ev1.selectbox(
        "Version to evaluate", range(len(refs)), format_func=lambda i: labels[i], key="ev_pick"
    )
    ev2.write("")
    if ev2.button("Evaluate", key="ev_go", disabled=busy, width="stretch"):
        with guard("Starting the evaluation"):
            client.evaluate(handle, refs[pick])
            st.rerun()  # the page head shows the run's progress bar while the model is busy
    with st.container():  # a second version brings it: the threshold box below keeps its place
        _comparison(client, handle, refs, labels)  # first: it is the view that decides between versions
    _results(client, handle, refs[pick], earlier_refs(refs, refs[pick]), busy)


def _added(said: tuple[str, bool, list[Refusal], str | None]) -> None:
    """What an addition to the evaluation set did: its rows not used are never a green success."""
    message, ok, repeats, trained = said
    (st.success if ok else st.warning)(message)
    if repeats:
        st.dataframe(refusals_frame(repeats), hide_index=True, width="stretch")
    if trained:  # said when added, not first at Evaluate
        st.warning(trained, icon=":material/warning:")


def _upload(client: Client, handle: str) -> None:
    say_once("ev_flash", _added)
    with st.expander("Add evaluation items from a file"):
        st.caption(
            "A file of labelled texts (CSV, TSV, TXT, JSON or JSONL) in any columns, mapped as on the "
            "Samples page's Import: pick the text, the label and the trait, and how a label becomes quality. "
            "Nothing is added before **Add to the evaluation set**; items already in the set are skipped."
        )
        # A generation in the uploader's key: after adding, a new (empty) uploader replaces the used one.
        gen = st.session_state.setdefault("ev_upload_gen", 0)
        traits = reads.traits(client, handle)
        read = labelled_file(f"ev_upload_{gen}", "ev", traits, what="evaluation items", handle=handle)
        if read is None or not st.button(
            "Add to the evaluation set", key="ev_add", type="primary", disabled=not read.mapped.samples
        ):
            return
        # Several raters' labels go in as one item per vote, each with its rater (the human ceiling's votes).
        fields = ("trait", "text", "quality", "annotator")
        rows: list[dict[str, Any]] = [{k: r[k] for k in fields if k in r} for r in read.mapped.samples]
        with guard("Adding evaluation items"):
            bar = st.progress(0.0, text=f"Adding {len(rows):,} items…")

            def _progress(done: int, total: int) -> None:
                bar.progress(done / total, f"Added {done:,} of {total:,} items")

            out = client.add_evaluation_items(handle, rows, progress=_progress)
            remember_scale(handle, read.mapping)
            read.kept.imported()
            repeats = [
                Refusal(read.mapped.lines[i], "identical to an item of the set: nothing added")
                for i in out.duplicates
            ]
            st.session_state["ev_flash"] = (
                evaluation_outcome(out.added, out.total, len(rows), read.refused),
                not [r for r in read.refused if r not in read.mapped.dropped],
                repeats,
                overlap_note(out.in_pool, out.in_samples),
            )
            st.session_state["ev_upload_gen"] = gen + 1
            # The set's summary was read above this: rerun so Evaluate shows for the new items now.
            st.rerun()


def evaluation_outcome(added: int, total: int, sent: int, refused: list[Refusal]) -> str:
    """What adding a file to the evaluation set did with each row: added, in the set already (an identical
    item), not used (with the first reason; every one is listed under the file before adding)."""
    there = sent - added
    same = f" {there:,} {'was' if there == 1 else 'were'} in the set already (listed)." if there else ""
    skipped = (
        f" {len(refused)} row(s) of the file were not used (first: line {refused[0].line}: "
        f"{refused[0].reason})."
        if refused
        else ""
    )
    return f"Added {added:,} items ({total:,} in the set).{skipped}{same}"


def _results(client: Client, handle: str, ref: str, earlier: list[str], busy: bool = False) -> None:
    try:
        result = client.get_evaluation(handle, ref)
    except NotFoundError:
        st.caption(_not_evaluated(client, handle, ref, busy))
        return
    thresholds: dict[str, Threshold] = {}
    with guard("Reading thresholds"):
        thresholds = client.thresholds(handle, ref)
    texts = sum(t.items for t in result.traits.values())
    votes = sum(t.votes or t.items for t in result.traits.values())
    # Several annotators' items of one text are one text with several votes (docs/api.md, "Human ceiling").
    # Without a ceiling no text has two annotators' votes: its extra items are one rater's rows of a text
    # given again, which count once (their latest), so calling them votes would count a rater twice.
    several = any(t.human_ceiling is not None for t in result.traits.values())
    if votes <= texts:
        measured = f"{result.items:,} evaluation items"
    elif several:
        measured = f"{texts:,} texts ({votes:,} votes)"
    else:
        measured = f"{texts:,} texts (from {votes:,} items: a text one rater gave again counts once)"
    # A heading of its own: under the comparison's, the version's results read as the comparison's.
    st.markdown(f"#### {escape_md(ref)} on {escape_md(measured)} (95% intervals)")
    if line := trained_sentence(ref, result):
        st.caption(line)
    st.dataframe(eval_metrics_frame(result, thresholds), hide_index=True, width="stretch")
    if note := calibration_note(result.traits):  # graded labels: why the error is large, said beside it
        st.caption(note)
    if note := neutral_note(sum(t.neutral for t in result.traits.values()), "items", NEUTRAL_METRICS):
        st.caption(note)
    ceilings = [c for key, t in sorted(result.traits.items()) if (c := ceiling_sentence(ref, key, t))]
    for line in ceilings:
        st.markdown(line)
    if ceilings:
        st.caption(
            "The human ceiling: how well one annotator's vote predicts the mean of the others' (Pearson r, "
            "leaving each annotator out in turn); the version is measured against the same targets. Over "
            "100 % the model predicts the others' consensus better than one of them does."
        )
    curves: dict[str, TraitPrCurve] = {}
    with guard("Reading the precision-recall curve"):
        curves = client.pr_curve(handle, ref).traits
    traits = [k for k, v in curves.items() if v.points]
    if not traits:
        return
    with st.container(border=True):
        st.markdown("**Decision threshold** (scores stay calibrated; the threshold adds a yes/no decision)")
        t1, t2, t3 = st.columns(3)
        trait = t1.selectbox("Trait", traits, key="thr_trait")
        target = t2.radio("Target", ["precision", "recall"], horizontal=True, key="thr_target")
        value = t3.number_input(f"Minimum {escape_md(target)}", 0.01, 1.0, 0.9, 0.01, key="thr_value")
        chosen = thresholds.get(trait)
        # Beside the curve a threshold is chosen on, whether the scores mean what they say (0.8: 80 %).
        c1, c2 = st.columns(2)
        c1.plotly_chart(
            pr_curve_chart(curves[trait].points, chosen, title=f"{trait}: precision-recall ({ref})"),
            width="stretch",
            key="thr_chart",
        )
        bins = result.traits[trait].reliability if trait in result.traits else []
        c2.plotly_chart(
            reliability_chart({ref: bins}, title=f"{trait}: reliability ({ref})"),
            width="stretch",
            key="thr_reliability",
        )
        b1, b2 = st.columns(2)
        if b1.button(
            f"Set {escape_md(trait)}'s threshold on {escape_md(ref)}", key="thr_set", type="primary"
        ):
            _set_threshold(client, handle, ref, trait, target, float(value))
        if chosen and b2.button(f"Remove {escape_md(trait)}'s threshold", key="thr_clear"):
            with guard("Removing the threshold"):
                client.clear_threshold(handle, ref, trait)
                st.rerun()
        if not chosen:
            _carried(client, handle, ref, earlier, trait, curves[trait])


def _carried(
    client: Client, handle: str, ref: str, earlier: list[str], trait: str, curve: TraitPrCurve
) -> None:
    """The newest earlier version's threshold for `trait`, read against this version's curve, with a button to
    set this version's own for the same target: a threshold never passes to another version by itself."""
    found: tuple[str, Threshold] | None = None
    for source in earlier[:CARRIED_LOOKBACK]:
        try:
            old = client.thresholds(handle, source).get(trait)
        except ApiError:  # shown nowhere else: without it the box stays as it was
            return
        if old is not None:
            found = source, old
            break
    if found is None:
        return
    carried = carried_threshold(*found, curve.points)
    st.caption(
        f"{escape_md(ref)} has no {escape_md(trait)} threshold of its own (a threshold stays with its "
        f"version). {escape_md(carried_sentence(ref, carried))}"
    )
    old = carried.old
    if carried.meeting is None or old.target is None or old.value is None:
        return
    if st.button(
        f"Set {escape_md(ref)}'s threshold for {escape_md(old.target)} ≥ {old.value:g}", key="thr_carry"
    ):
        _set_threshold(client, handle, ref, trait, old.target, old.value)


def _set_threshold(client: Client, handle: str, ref: str, trait: str, target: str, value: float) -> None:
    with guard("Setting the threshold"):
        out = client.set_threshold(handle, ref, trait, target=target, value=value)
        st.session_state["versions_flash"] = (
            f"{trait} on {ref}: threshold {out.threshold:.3f} "
            f"(precision {out.precision:.3f}, recall {out.recall:.3f} on the evaluation set)."
        )
        st.rerun()


def _not_evaluated(client: Client, handle: str, ref: str, busy: bool) -> str:
    """Why a version has no results, and what to do: never "press Evaluate" under the evaluation that runs
    (or while another run keeps the button disabled)."""
    if not busy:
        return f"{escape_md(ref)} was not evaluated yet: press **Evaluate**."
    op = None
    with contextlib.suppress(Exception):  # the page head shows the run either way
        op = reads.model(client, handle).last_operation
    if op is not None and op.kind == "evaluate":
        return "An evaluation is running (its progress is at the top of the page): its results show here."
    return (
        f"{escape_md(ref)} was not evaluated yet: **Evaluate** once the run in progress "
        "(top of the page) ends."
    )


def _comparison(client: Client, handle: str, refs: list[str], labels: list[str]) -> None:
    if len(refs) < 2:
        return
    st.markdown("#### Compare two versions on the evaluation set")
    c1, c2, c3 = st.columns([2, 2, 1])
    ia = c1.selectbox("A", range(len(refs)), index=1, format_func=lambda i: labels[i], key="evcmp_a")
    ib = c2.selectbox("B", range(len(refs)), index=0, format_func=lambda i: labels[i], key="evcmp_b")
    c3.write("")
    if c3.button("Compare on the set", key="evcmp_go", disabled=ia == ib, width="stretch"):
        with guard("Comparing evaluations"):
            st.session_state["evcmp"] = client.compare_evaluations(
                handle, refs[ia], refs[ib], limit=EXPORTED_DISAGREEMENTS
            )
    cmp = st.session_state.get("evcmp")
    if not isinstance(cmp, EvaluationComparison) or cmp.handle != handle:
        return
    a, b = f"v{cmp.a.version_no}", f"v{cmp.b.version_no}"
    st.markdown(f"**A = {escape_md(a)} · B = {escape_md(b)}** · paired on {cmp.items:,} items")
    if line := comparison_trained_sentence(a, b, cmp):
        st.caption(line)
    for key, t in sorted(cmp.traits.items()):
        if line := comparison_ceiling_sentence(a, b, key, t):
            st.markdown(line)
    frame = comparison_frame(cmp)
    st.dataframe(
        frame.style.apply(_significant_color, axis=1).format(
            {"A": "{:.3f}", "B": "{:.3f}", "B − A": "{:+.3f}", "p": "{:.3g}"}
        ),
        hide_index=True,
        width="stretch",
        key="evcmp_metrics",
    )
    st.caption(
        "Paired on the same items: DeLong's test for ROC-AUC, a paired bootstrap (500 resamples) for the "
        "others. Coloured where the 95% interval of B − A leaves out 0 (green: B better, red: B worse)."
    )
    traits = list(cmp.traits)
    for start in range(0, len(traits), 2):
        for col, key in zip(st.columns(2), traits[start : start + 2], strict=False):
            t = cmp.traits[key]
            col.plotly_chart(
                reliability_chart({a: t.reliability_a, b: t.reliability_b}, title=f"Reliability: {key}"),
                width="stretch",
                key=f"evcmp_rel_{key}",
            )
    dis = disagreements_frame(cmp)
    st.markdown(f"**Where {escape_md(a)} and {escape_md(b)} disagree most** (label = the item's quality)")
    st.dataframe(
        dis.head(SHOWN_DISAGREEMENTS).style.format(
            {"label": "{:.2f}", "A": "{:.3f}", "B": "{:.3f}", "B − A": "{:+.3f}"}
        ),
        hide_index=True,
        width="stretch",
        key="evcmp_dis",
    )
    # The file holds the most disagreed items, up to EXPORTED_DISAGREEMENTS: it says so beside the pairs.
    some = (
        f"the {len(dis):,} most disagreed of {cmp.items:,} items"
        if len(dis) < cmp.items
        else f"{len(dis):,} items"
    )
    st.download_button(
        f"Download the comparison (CSV, {some})",
        comparison_csv(cmp),
        file_name=f"{handle}-{a}-vs-{b}-evaluation.csv",
        mime="text/csv",
        key="evcmp_csv",
    )


def _significant_color(row: pd.Series) -> list[str]:
    if row["significant"] != "yes":
        return [""] * len(row)
    better = row["B − A"] < 0 if row["metric"] == "calibration error" else row["B − A"] > 0
    color = (
        "background-color: rgba(90, 164, 105, 0.25)"
        if better
        else "background-color: rgba(217, 80, 74, 0.25)"
    )
    return [color] * len(row)
