"""Label: one suggested text at a time from the model's unlabelled pool; keys 1/2 label (1..N for a trait
rated on a scale), 0 skip, u undo, ? unsure.

Texts are claimed for the person labelling (a team gets disjoint work); a status line, refreshed by itself,
says what the model is doing and which version the labels go into."""

from __future__ import annotations

from functools import partial

import streamlit as st

from app.labelling.campaign import campaign_of, status_line
from app.labelling.chart import curve_chart
from app.labelling.feedback import buffered_feedback
from app.labelling.key_presses import apply_key, label_keys, should_apply
from app.labelling.labels import labelling_note, retrain_at, review_note
from app.labelling.labels_given import forget_withdrawn_label, update_curve
from app.labelling.my_labels import (
    guidelines_section,
    keep_in_address,
    labelled_since,
    metadata_line,
    my_labels_section,
    session_start,
    session_tag,
)
from app.labelling.notes import UNSURE_KEY, guidelines, note_controls, unsure_pressed
from app.labelling.pool_import import STATE as IMPORT_STOPPED
from app.labelling.pool_import import empty_pool_note, pool_heading, pool_import_section
from app.labelling.pool_search import pool_search
from app.labelling.session import Failure, LabelSession, Press, shown_as
from app.labelling.suggestion_queue import (
    abandon,
    first_suggestions_ready,
    follow_campaign,
    poll,
    set_mode_and_overlap,
    start,
    try_again,
)
from app.shell import reads
from app.shell.backend import mark_signed_out
from app.shell.roles import gate
from app.ui.inert import code, escape_md, html_text
from app.ui.keys import key_listener
from app.ui.widgets import guard, open_model_page, show_error
from core.client import Trait
from core.contract import SUGGEST_MODES
from core.model_states import can

KEYS = ["0", "u", "ArrowLeft", "ArrowRight"]  # and the trait's label keys (`label_keys`)

backend, client, model, handle, busy = open_model_page("Label")
traits: list[Trait] = []
with guard("Listing traits", retry=True):
    traits = client.list_traits(handle)
if not traits:
    st.info("Add a trait first (Traits page): labels belong to a trait.")
    st.stop()
names = {t.key: t for t in traits}
guidelines_section(client, handle, backend.may("manage"))

# Said before the first key: on a trained model a label is feedback for its next version; on a reviewed
# model an annotator's label is a proposal. (While a run is in flight the label is buffered for the version
# after it: the status line below says so.)
feedback_route = not can("edit", model.state) and not model.zero_data_retention
at = retrain_at(client, handle)
# The note's place is kept while a run is in flight: the rerun when it ends brings the note, and a Comment
# box moved to another place would be drawn anew, losing what was typed but not yet sent.
with st.container():
    if model.state != "busy" and (note := labelling_note(model, at, count=False)) is not None:
        st.info(note, icon=":material/school:" if feedback_route else ":material/block:")
    if (proposal := review_note(model, backend.may("review"))) is not None:
        st.info(proposal, icon=":material/rate_review:")


def _signed_out(session: LabelSession | None) -> None:
    """A press the service refused because the person is signed out (here, in another tab): the whole
    page gives way to the signed-out one, which says the press was not stored (app/main.py)."""
    if session is not None and session.signed_out is not None:
        mark_signed_out(session.signed_out, session.message)
        st.rerun(scope="app")


@st.fragment(run_every=5.0)
def campaign_status() -> None:
    """The model as the service has it now: a colleague's training, an automatic version, a pause. A change
    of the campaign reruns the whole page (its counts, overlap and votes wanted follow); texts added to the
    pool, or colleagues' claims ended, reach a queue that had run out."""
    kept: LabelSession | None = st.session_state.get("label_session")
    _signed_out(kept)
    live = model
    with guard("Reading the model"):
        live = client.get_model(handle)
        if campaign_of(live) != campaign_of(model):
            reads.invalidate(client.base_url)  # the page's cached model is the old campaign's
            st.rerun(scope="app")
        if kept is not None and kept.handle == handle and kept.current is None:
            if poll(kept, client, client.list_pool_page(handle, limit=1).total):
                st.rerun(scope="app")
            _signed_out(kept)
    line, switch = st.columns([5, 1], vertical_alignment="center")
    # The buffer's count is the expander's below, read with its labels: one number, never two.
    said = status_line(live, at, buffered=not feedback_route)
    line.markdown(f":material/sync: {code(handle)} · {said}")
    if backend.team and backend.may("manage"):  # the owner's settings live on the Team page; others see none
        switch.caption(":material/tune: Votes wanted, pausing retraining: **Team** page")


campaign_status()

pool_size = held_out = 0
with guard("Reading the pool", retry=True):
    first_page = client.list_pool_page(handle, limit=1)
    # The texts to label: those of the evaluation set are never labelled, whichever was imported first.
    pool_size, held_out = first_page.total, first_page.in_evaluation_set
# What the last pool import did, shown once: popped here, put back for the rerun the page asks for itself when
# the first suggestions come (below), or it would vanish half a second after the import, unread.
POOL_FLASHES = ("pool_flash", "pool_flash_warning")
pool_flashes = {k: st.session_state.pop(k) for k in POOL_FLASHES if k in st.session_state}
# In one container, there or not: the labelling part below keeps its place (a fragment's id is its place, and
# a press sent while the page moved it named a fragment gone: app/ui/rerun_requests.py).
with st.container():
    if flash := pool_flashes.get("pool_flash"):
        st.success(flash)
    if warning := pool_flashes.get("pool_flash_warning"):
        st.warning(warning, icon=":material/warning:")
pool_open = not pool_size or IMPORT_STOPPED in st.session_state
with st.expander(pool_heading(pool_size, held_out), expanded=pool_open):
    st.caption(
        "Texts to label, kept by the service for this model. A file of texts (CSV, TSV, TXT, JSON or JSONL; "
        "the texts of a `text` column, else the one of the longest strings, or one a line); sent in batches "
        "that shrink when the service is slow; texts already there are skipped, so an import that stopped "
        "resumes without duplicates."
    )
    if gate(backend, "manage", "Importing or emptying the pool"):
        with guard("Importing the pool"):
            pool_import_section(client, handle, lambda: st.session_state.pop("label_session", None))
        if st.button("Empty the pool", key="pool_clear"):
            with guard("Emptying the pool"):
                client.clear_pool(handle)
                st.session_state.pop("label_session", None)
                st.rerun()

# Streamlit forgets a widget's value when its page is left: coming back, the trait and mode are the kept
# session's, so that session (its labels and counters) carries on rather than a new one starting.
if (before := st.session_state.get("label_session")) is not None and before.handle == handle:
    if before.trait in names:
        st.session_state.setdefault("label_trait", before.trait)
    st.session_state.setdefault("label_mode", before.mode)
c1, c2, c4 = st.columns([2, 2, 2])
trait = c1.selectbox("Trait", list(names), key="label_trait", format_func=lambda k: names[k].name)
mode = c2.selectbox(
    "Suggest",
    SUGGEST_MODES,
    key="label_mode",
    help="auto: typical texts of the parts of the pool no label covers yet, half from each side of the "
    "boundary while a pole is rare; typical: only those; uncertain: the smallest margins; diverse: the texts "
    "least like any label; positive / negative: more of that pole",
)
# The overlap is the campaign's, which the owner sets on the Team page: the suggestions ask for none. The
# embedded service has one analyst and no colleagues to share texts with, so nothing is said there.
if backend.service is None:
    c4.caption(
        f":material/group: Overlap with colleagues: {model.overlap:.0%} of suggestions"
        + (" (set on the **Team** page)" if backend.team and backend.may("manage") else "")
    )
if not pool_size:
    st.info(empty_pool_note(held_out))
    st.stop()
pool_search(
    backend, client, handle, names[trait], pool_size, lambda: st.session_state.pop("label_session", None)
)
if not gate(backend, "label", "Labelling"):
    st.stop()

kept: LabelSession | None = st.session_state.get("label_session")
if kept is None or (kept.handle, kept.trait, kept.annotator) != (handle, trait, backend.annotator):
    if kept is not None and (kept.handle, kept.annotator) == (handle, backend.annotator):
        abandon(kept, client)
    fresh = LabelSession(handle, trait, mode, annotator=backend.annotator)
    # A reload: this person's session on this model goes on (not the one of whoever used the tab before).
    if kept is None and (resumed := session_start(session_tag(backend.annotator, handle))) is not None:
        fresh.since = resumed
    if kept is not None:  # a press delivered again after the switch is still one taken
        fresh.presses = kept.presses
    kept = fresh
    st.session_state["label_session"] = kept
    start(kept, client)  # fetched after the first paint: the service may take seconds on a large pool
elif kept.mode != mode:  # the session's labels and counters stay
    with guard("Changing the suggestions"):
        set_mode_and_overlap(kept, client, mode, kept.overlap)
with guard("Following the campaign"):
    follow_campaign(kept, client, (model.overlap, model.votes_wanted))
session: LabelSession = kept
keep_in_address(session.since, session_tag(backend.annotator, handle))
# Read each run: the owner may have set the trait's scale since the session began.
scale = names[trait].scale
session.points = scale.points if scale is not None else None
# A scale offers the Unsure key only if its owner chose so; a pole trait has it as before.
offers_unsure = scale is None or scale.unsure
session.reviewer = backend.may("review")  # the role may change between runs (an owner's change)


def _press(press: Press) -> None:
    """A key or button: acted on only on the text it was pressed on, once (`should_apply`)."""
    if should_apply(session, press) and not unsure_pressed(session, press.key, client):
        apply_key(session, press.key, client, model)


def _key(key: str, shown: str | None, nonce: str | None) -> None:
    _press(Press(key, shown, nonce))


def _try_again(failure: Failure) -> None:
    """*Try again* under failed suggestions: asked for again (a failed press is the person's to press again,
    on the text it was pressed on, still shown)."""
    if session.failure is failure:  # else it has gone meanwhile (the status line asked again by itself)
        try_again(session, client)


@st.fragment
def labelling() -> None:
    """A label reruns only this part: the sidebar, the model, its traits and its pool are not read again."""
    _signed_out(session)
    t = names[trait]
    labels = label_keys(t)
    unsure = [UNSURE_KEY] if offers_unsure else []
    key_listener("label_keys", [*(k for k, _ in labels), *KEYS, *unsure], _key, shown_from="[data-shown]")
    left = session.left
    # What is left to label follows every label (a count that stayed put misled). With several votes wanted
    # a labelled text stays until it has them all: the count says so rather than "left to label".
    wanted = model.votes_wanted
    # The service's count of this person's labels since the session started: a reload keeps it.
    done = labelled_since(client, handle, trait, session.since)
    done = len(session.history) if done is None else done
    counted = "Left to label" if wanted == 1 else f"Texts wanting {wanted:d} votes"
    st.metric(
        f"{counted} for {escape_md(t.name)}",
        f"{left:,} of {pool_size:,}" if left is not None else f"{pool_size:,} in the pool",
        # With more votes wanted a label need not lower the count: "497 of 499" beside "-21" read as wrong,
        # so the session's own figure then stays in the caption below. No sign and no arrow: "−1 this
        # session" read as a label taken away.
        delta=f"{done:,} done in this session" if done > 0 and wanted == 1 else None,
        delta_color="off",
        delta_arrow="off",
        help=None
        if wanted == 1
        else f"A text counts here until {wanted:,} people labelled it, however many labels it has already.",
    )
    item = session.current
    if item is None:
        if session.failure is None and not session.left:  # else the failure or the message below says why
            st.success("No more suggestions: every text in the pool is labelled for this trait.")
        elif session.failure is None:
            st.info(session.message or "No text to suggest just now.", icon=":material/hourglass_empty:")
    else:
        score = item.get("score")
        score_line = "no fit yet" if score is None else f"current score {score:.2f}"
        st.markdown(
            f'<div data-testid="label-text" data-shown="{html_text(shown_as(trait, item) or "")}" '
            f'style="font-size:1.9rem;line-height:1.45;padding:1.2rem 1.4rem;'
            f'border-radius:0.6rem;background:var(--st-secondary-background-color, #f0f2f6)">'
            f"{html_text(item['text'])}</div>",
            unsafe_allow_html=True,
        )
        shared = " · :material/group: a colleague labelled this one" if item.get("overlap") else ""
        st.caption(
            f"#{item['id']:d} · {score_line} · {session.pos + 1:,} of {len(session.queue):,} queued · "
            f"{done:,} labelled this session{shared}"
        )
        if meta := metadata_line(item.get("metadata")):
            st.caption(meta)
        guidelines(t)
        on_unsure = partial(_press, Press(UNSURE_KEY, shown_as(trait, item)))
        note_controls(client, session, on_unsure if offers_unsure else None, unsure=offers_unsure)
    moves = [("0", "0 · skip"), ("u", "u · undo"), ("ArrowLeft", "← back"), ("ArrowRight", "→ next")]
    # Two poles share a row with the moves; a scale's points get a row of their own, lowest first.
    rows = [[*labels, *moves]] if t.scale is None else [labels, moves]
    shown = shown_as(trait, item)  # a click acts on the text drawn with the button
    for row in rows:
        for column, (key, label) in zip(st.columns(len(row)), row, strict=True):
            press = Press(key, shown)
            column.button(
                escape_md(label), key=f"label_btn_{key}", on_click=_press, args=(press,), width="stretch"
            )
    if (failure := session.failure) is not None:
        # Failed suggestions are asked for again by the status line's poll (every few seconds) as well.
        show_error(failure.exc, failure.what, retry=failure.suggesting and partial(_try_again, failure))
    elif session.message and not (item is None and session.left):  # else said above, in its place
        st.caption(session.message)
    # A key's word beside it: "`1` rude, `2`, `3`" (a point named by its number has no word of its own).
    said = ", ".join(
        f"{code(k)} {escape_md(label.partition(' · ')[2])}" if " · " in label else code(k)
        for k, label in labels
    )
    said += ", `0` skip" + (", `?` unsure" if offers_unsure else "")
    st.caption(
        f"Keys: {said}, `u` undo, "
        "`←` `→` move (while this page is shown and the focus is not in a text field)."
    )

    if feedback_route:
        forget = partial(forget_withdrawn_label, session)
        buffered_feedback(client, handle, backend.key, forget, model.auto_retrain)
    c1, c2 = st.columns([1, 3])
    help_text = (
        "Scores every label of the trait by folds that did not see it "
        "(stored samples are embedded once per workbench process)."
    )
    if c1.button("Update the AUC chart", key="label_curve", help=help_text):
        with guard("Computing the out-of-fold AUC"), st.spinner("Scoring the labels out of fold…"):
            # Imported on the click, not with the page: the embedders bring in scikit-learn and onnxruntime,
            # seconds of a cold page's first paint.
            from app.shell import engine_cache

            # The sample cache keeps stored texts' embeddings; a ZDR model keeps no text: never cached.
            zdr = model.zero_data_retention
            cache = engine_cache.embedder if zdr else engine_cache.sample_embedder
            if update_curve(session, client, cache(engine_cache.model_embedder(client, model))) is None:
                st.info("The AUC needs at least 2 labels of each pole.")
    if session.curve:
        chart = curve_chart(session.curve)
        st.altair_chart(chart, width="stretch")
        c2.caption(
            f"Out-of-fold ROC-AUC of {escape_md(t.name)}'s labels (5-fold, local engine): "
            f"{session.curve[-1][1]:.3f} after {session.curve[-1][0]:,} label(s) this session."
        )
    # Drawn with the labels, not once with the page: a list drawn when the page opened would miss every
    # label given since (a label reruns this fragment only).
    my_labels_section(client, handle, names, partial(forget_withdrawn_label, session))


@st.fragment(run_every=0.5)
def awaiting_suggestions() -> None:
    """While the first suggestions are on their way: a note, polled; the whole page reruns when they come."""
    if first_suggestions_ready(session, client):
        st.session_state.update(pool_flashes)  # a rerun the person did not ask for keeps the import's message
        st.rerun()
    st.caption(":material/hourglass_top: Fetching suggestions from the pool…")


if first_suggestions_ready(session, client):
    labelling()
else:
    awaiting_suggestions()
    my_labels_section(client, handle, names, partial(forget_withdrawn_label, session))
