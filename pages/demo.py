"""Demo: a presentation view. Large input, large bars and coloured words, the version shown (the `demo` tag by
default) or two side by side, examples that demo each trait, a shareable ?model=&text=&version= URL."""

from __future__ import annotations

import streamlit as st

from app.scoring.demo import (
    ACTIVE,
    MAX_URL_TEXT,
    big_bars,
    blank_chart,
    default_version,
    demo_examples,
    is_local,
    other_version,
    public_base_url,
    score_meaning,
    scored_by,
    share_url,
    version_arg,
    version_options,
    warm_up,
)
from app.shell import reads
from app.shell.backend import demo_load
from app.ui.inert import code, escape_md
from app.ui.live_text import live_text_area
from app.ui.widgets import (
    guard,
    page_backend,
    require_model,
    select_model,
    selected_handle,
    show_error,
    watch_if_busy,
)
from core.charts import score_bars
from core.client import Client, ScoreResult, Version

# A presenter's view: the sidebar starts collapsed, so the box and the bars get the whole projector screen.
st.set_page_config(initial_sidebar_state="collapsed")
backend = page_backend()
client = backend.client

# A shared link names the model and the text: honour them once per link. The page writes the URL itself
# as the text changes (`_sync_url`) and remembers what it wrote: the browser may send back any of those
# (its URL lags behind the typing), and taking one for a new link would replace the box's text with an
# older copy while the presenter keeps typing.
url_model, url_text = st.query_params.get("model"), st.query_params.get("text")
link = (url_model, url_text)
written = st.session_state.setdefault("demo_written", [])
if url_text in written:
    st.session_state["demo_link"] = link
if st.session_state.get("demo_link") != link:
    st.session_state["demo_link"] = link
    if url_text is not None:
        st.session_state["demo_text"] = url_text
        st.session_state["demo_rev"] = st.session_state.get("demo_rev", 0) + 1
        st.session_state["demo_text_model"] = url_model or selected_handle()  # the linked text is its model's
    # The link's version (and the one beside it) are the presenter's choice, as if picked here.
    st.session_state["demo_version_link"] = (st.query_params.get("version"), st.query_params.get("vs"))
    if url_model and url_model != selected_handle():
        select_model(url_model)
        st.rerun()  # so the sidebar picker shows the linked model too

handle: str = selected_handle() or ""
if not handle:
    st.title("Demo")
    st.info("Pick a trained model in the sidebar.")
    st.stop()
# The selected model (`handle`): on a first start one not created yet says so and opens once it is there.
model = require_model(backend)


@st.fragment(run_every=2.0)
def _wait_for_version(handle: str) -> None:
    """Rerun the page once the demo model trains or the loading ends (then the page says what is so)."""
    found = client.get_model(handle)
    if found.state == "busy" or found.version_no or not demo_load().running:
        reads.invalidate(backend.url)
        st.rerun(scope="app")


st.header(model.description or handle)
if not model.version_no:
    st.caption(code(handle))
    op = model.last_operation
    if model.state == "busy" and op is not None and op.kind in ("train", "retrain"):
        # Its first training is queued or under way (a demo model's on a first start): the page opens the
        # demo when it ends, rather than send the visitor to train a model that is training.
        st.info(
            "This model is training its first version: the demo opens here when it is ready.",
            icon=":material/hourglass_top:",
        )
        watch_if_busy(model)
    elif demo_load().running:
        # A demo model on a first start, between its creation and its training's start (its samples going
        # in): the draft's warning would stay on the page, which nothing reruns, after the training began.
        st.info(
            "The demo models are still loading (progress in the sidebar): the demo opens here when this "
            "model has a trained version.",
            icon=":material/hourglass_top:",
        )
        _wait_for_version(handle)
    else:
        st.warning("This model has no trained version yet: train it on the **Training** page first.")
    st.stop()

# Another model's text is no example of this one: opening another model empties the box.
if st.session_state.get("demo_text_model", handle) != handle:
    st.session_state["demo_text"] = ""
    st.session_state["demo_rev"] = st.session_state.get("demo_rev", 0) + 1
    st.query_params.pop("text", None)
st.session_state["demo_text_model"] = handle

versions: list[Version] = []
with guard(f"Listing the versions of {handle}"):
    versions = reads.versions(client, handle)
active_no = model.version_no
options = version_options(versions)
if st.session_state.get("demo_version_of") != handle or st.session_state.get("demo_version") not in options:
    st.session_state["demo_version"] = default_version(versions)  # the `demo` tag, else the active version
    st.session_state["demo_side"] = False
    st.session_state.pop("demo_vs", None)
st.session_state["demo_version_of"] = handle
linked_version, linked_beside = st.session_state.pop("demo_version_link", (None, None))
if linked_version in options:
    st.session_state["demo_version"] = linked_version
if linked_beside in options:
    st.session_state["demo_vs"] = linked_beside
    st.session_state["demo_side"] = True


def _side_toggled() -> None:
    # Turned on: beside the version shown, the one it is most likely compared with (one click: v1 vs v2).
    if st.session_state.get("demo_side"):
        other = other_version(st.session_state.get("demo_version") or "", versions, active_no)
        if other is not None:
            st.session_state["demo_vs"] = other


pick, side, beside_pick, _ = st.columns([2, 2, 2, 5], vertical_alignment="bottom")
with pick:
    shown = st.selectbox(
        "Version shown",
        options,
        key="demo_version",
        format_func=lambda o: f"{o} (v{active_no})" if o == ACTIVE else o,
        help="The `demo` tag when a version has it, else the active version.",
    )
shown = shown or default_version(versions)
beside_default = other_version(shown, versions, active_no)
with side:
    side_by_side = st.toggle(
        "Side by side",
        key="demo_side",
        on_change=_side_toggled,
        disabled=beside_default is None,
        help="Score the same text with a second version, beside the first.",
    )
beside: str | None = None
if side_by_side and beside_default is not None:
    if st.session_state.get("demo_vs") not in options:
        st.session_state["demo_vs"] = beside_default
    with beside_pick:
        beside = st.selectbox("Beside it", options, key="demo_vs")


def _sync_url() -> None:
    # Only the URL is cut to a sane length; the text scored is the whole text.
    url_text = st.session_state.get("demo_text", "")[:MAX_URL_TEXT]
    st.query_params["text"] = url_text
    st.session_state["demo_link"] = (st.query_params.get("model"), url_text)
    written = st.session_state.setdefault("demo_written", [])
    written.append(url_text)
    del written[:-100]  # the browser only ever lags a few writes behind


def _typed(text: str) -> None:
    st.session_state["demo_text"] = text
    _sync_url()


def _use_preset(text: str) -> None:
    # Python replaces the text: a new revision makes the box take it.
    st.session_state["demo_text"] = text
    st.session_state["demo_rev"] = st.session_state.get("demo_rev", 0) + 1
    _sync_url()


@st.cache_data(ttl=600, show_spinner=False, max_entries=50)
def _examples(_client: Client, handle: str, version: str | None, stamp: object) -> list[tuple[str, str]]:
    # Cached per model, version and sample count: one scoring request of at most 100 texts per change.
    samples = reads.samples_head(_client, handle, limit=5000)
    traits = reads.traits(_client, handle)

    def score(texts: list[str]) -> list[dict[str, float]]:
        out: list[dict[str, float]] = [{} for _ in texts]
        for r in _client.score_many(handle, texts, version=version):
            out[r.index or 0] = r.as_dict()
        return out

    return [(e.text, e.note) for e in demo_examples(samples, traits, score)]


examples: list[tuple[str, str]] = []
with guard("Choosing the examples"):
    examples = _examples(client, handle, version_arg(shown), (model.sample_count, model.version_no))
warm_up(client, handle)


def _scored(choice: str, text: str) -> ScoreResult | None:
    try:
        return client.score(handle, text, version=version_arg(choice), explain=True)
    except Exception as exc:  # noqa: BLE001 - shown as one readable message, the other version still draws
        show_error(exc, f"Scoring with {choice}")
        return None


def _words(result: ScoreResult, text: str, trait: str) -> None:
    """The text's words coloured for `trait` by this version's explanation, with the legend."""
    effects = (result.explanation or {}).get(trait)
    if isinstance(effects, list):
        negative, positive = result.labels().get(trait, ("negative", "positive"))
        from app.scoring.preview import highlight_html  # on use: its module loads the engine

        st.html(highlight_html(text, effects, positive, negative))


# The box, the examples and the bars in one fragment: a pause in typing reruns only this part (one score
# request per version and its chart), not the page, so the bars follow from the first key press.
@st.fragment
def live_view() -> None:
    # One projector screen (1280×800, sidebar collapsed): the box and the examples on the left, the bars and
    # the link on the right, so the bars stay in view while the presenter types.
    left, right = st.columns([5, 6], gap="large")
    with left:
        live_text_area(
            "demo_live",
            st.session_state.get("demo_text", ""),
            st.session_state.get("demo_rev", 0),
            _typed,
            label="Text to score",
            placeholder="Type something: the bars follow as you type.",
        )
        with st.container(key="demo_presets"):
            st.caption("Examples")
            for i, (text, _) in enumerate(examples):
                label = text if len(text) <= 70 else text[:67] + "…"
                st.button(
                    escape_md(label), key=f"preset_{i}", on_click=_use_preset, args=(text,), width="stretch"
                )
            # Each trait's most typical samples of each pole, then the hardest (when one is unsure): say which
            # is which.
            hardest = [note for _, note in examples if note.startswith("hardest")]
            if any(note for _, note in examples):
                st.caption(
                    "Each trait's most typical positive and negative samples, as the model scores them"
                    + (
                        f"; the last, the one the model finds hardest "
                        f"({escape_md(hardest[0].removeprefix('hardest: '))})."
                        if hardest
                        else "."
                    )
                )

    text = st.session_state.get("demo_text", "")
    with right:
        if not text.strip():
            st.info("Type a text on the left, or choose an example.")
            # An empty chart, a few pixels high: the browser loads and starts Plotly's code now, while the
            # presenter types, not when the first bars are due (seconds on a busy machine).
            st.plotly_chart(blank_chart(), key="demo_chart_preload", config={"displayModeBar": False})
            return
        results = [(shown, _scored(shown, text))]
        if beside is not None:
            results.append((beside, _scored(beside, text)))
        columns = st.columns(len(results)) if len(results) > 1 else [st.container()]
        for n, (column, (_, result)) in enumerate(zip(columns, results, strict=True)):
            if result is not None:
                with column:
                    st.markdown(f"**Scored by {escape_md(scored_by(result))}** · {code(handle)}")
                    chart = big_bars(score_bars(result, title=" "), compact=len(results) > 1)
                    st.plotly_chart(chart, width="stretch", key="demo_chart" if n == 0 else f"demo_chart_{n}")
        scored = [r for _, r in results if r is not None]
        if scored:
            st.caption(score_meaning(scored[0]))
            names = scored[0].names()
            trait = st.radio(
                "Colour the words for",
                list(names),
                format_func=lambda k: f"Words for {names.get(k, k)}",
                horizontal=True,
                key="demo_trait",
                label_visibility="collapsed",
            )
            columns = st.columns(len(results)) if len(results) > 1 else [st.container()]
            for column, (_, result) in zip(columns, results, strict=True):
                if result is not None:
                    with column:
                        _words(result, text, trait or "")
        public = public_base_url()
        url = share_url(st.context.url, handle, text, public, version=shown, beside=beside)
        cut = len(text) > MAX_URL_TEXT
        st.caption(
            "Share this view"
            + (f" (the link holds the first {MAX_URL_TEXT:,} characters)" if cut else "")
            + ":"
        )
        st.code(url, language=None, wrap_lines=True)
        if is_local(url):
            st.caption(
                ":material/info: This link opens only on this computer. To share it, set the workbench's "
                "public address on the **Settings** page or in `SCORING_PUBLIC_URL` "
                "(e.g. `https://workbench.example.com`)."
            )


live_view()
