"""Demo: a presentation view. Large input, large bars, preset texts, a shareable ?model=&text= URL."""

from __future__ import annotations

import streamlit as st

from app.scoring.demo import (
    MAX_URL_TEXT,
    big_bars,
    blank_chart,
    is_local,
    preset_texts,
    public_base_url,
    share_url,
    warm_up,
)
from app.shell import reads
from app.ui.live_text import live_text_area
from app.ui.widgets import guard, page_backend, select_model, selected_handle, show_error
from core.charts import score_bars

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
    if url_model and url_model != selected_handle():
        select_model(url_model)
        st.rerun()  # so the sidebar picker shows the linked model too

handle: str = selected_handle() or ""
if not handle:
    st.title("Demo")
    st.info("Pick a trained model in the sidebar.")
    st.stop()
model = None
with guard(f"Reading {handle}"):
    model = reads.model(client, handle)
if not model:
    st.stop()

st.header(model.description or handle)
st.caption(f"`{handle}`" + (f" · v{model.version_no}" if model.version_no else ""))
if not model.version_no:
    st.warning("This model has no trained version yet: train it on the **Training** page first.")
    st.stop()


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


presets = preset_texts(reads.samples_head(client, handle))
warm_up(client, handle)


# The box, the examples and the bars in one fragment: a pause in typing reruns only this part (one score
# request and one chart), not the page, so the bars follow from the first key press.
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
            for i, text in enumerate(presets):
                label = text if len(text) <= 70 else text[:67] + "…"
                st.button(label, key=f"preset_{i}", on_click=_use_preset, args=(text,), width="stretch")

    text = st.session_state.get("demo_text", "")
    with right:
        if not text.strip():
            st.info("Type a text on the left, or choose an example.")
            # An empty chart, a few pixels high: the browser loads and starts Plotly's code now, while the
            # presenter types, not when the first bars are due (seconds on a busy machine).
            st.plotly_chart(blank_chart(), key="demo_chart_preload", config={"displayModeBar": False})
            return
        try:
            result = client.score(handle, text)
            st.plotly_chart(big_bars(score_bars(result, title=" ")), width="stretch", key="demo_chart")
        except Exception as exc:  # noqa: BLE001
            show_error(exc, "Scoring")
        public = public_base_url()
        url = share_url(st.context.url, handle, text, public)
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
