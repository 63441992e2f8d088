"""Demo: a presentation view. Large input, large bars, preset texts, a shareable ?model=&text= URL."""

from __future__ import annotations

import streamlit as st

from app.demo_view import MAX_URL_TEXT, big_bars, preset_texts, share_url
from app.live_text import live_text_area
from app.records import as_dict
from app.widgets import guard, page_backend, select_model, selected_handle, show_error
from core.charts import score_bars

backend = page_backend()
client = backend.client

# A shared link names the model and the text: honour them once per link.
url_model, url_text = st.query_params.get("model"), st.query_params.get("text")
link = (url_model, url_text)
if st.session_state.get("demo_link") != link:
    st.session_state["demo_link"] = link
    if url_text is not None:
        st.session_state["demo_text"] = url_text
        st.session_state["demo_rev"] = st.session_state.get("demo_rev", 0) + 1
    if url_model and url_model != selected_handle():
        select_model(url_model)
        st.rerun()  # so the sidebar picker shows the linked model too

handle = selected_handle()
if not handle:
    st.title("Demo")
    st.info("Pick a trained model in the sidebar.")
    st.stop()
model = None
with guard(f"Reading {handle}"):
    model = as_dict(client.get_model(handle))
if not model:
    st.stop()

st.title(model.get("description") or handle)
st.caption(f"`{handle}`" + (f" · v{model['version_no']}" if model.get("version_no") else ""))
if not model.get("version_no"):
    st.warning("This model has no trained version yet: train it on the **Training** page first.")
    st.stop()


def _sync_url() -> None:
    st.query_params["text"] = st.session_state.get("demo_text", "")[:MAX_URL_TEXT]


def _typed(text: str) -> None:
    st.session_state["demo_text"] = text
    _sync_url()


def _use_preset(text: str) -> None:
    # Python replaces the text: a new revision makes the box take it.
    st.session_state["demo_text"] = text
    st.session_state["demo_rev"] = st.session_state.get("demo_rev", 0) + 1
    _sync_url()


presets = preset_texts(client, handle)
with st.container(key="demo_presets"):
    cols = st.columns(min(3, len(presets)))
    for i, text in enumerate(presets):
        label = text if len(text) <= 60 else text[:57] + "…"
        cols[i % len(cols)].button(
            label, key=f"preset_{i}", on_click=_use_preset, args=(text,), width="stretch"
        )

st.caption("Type or paste a text: the bars follow as you type.")
live_text_area(
    "demo_live",
    st.session_state.get("demo_text", ""),
    st.session_state.get("demo_rev", 0),
    _typed,
    label="Text to score",
    placeholder="Type something…",
)

text = st.session_state.get("demo_text", "")
if text.strip():
    try:
        result = client.score(handle, text)
        st.plotly_chart(big_bars(score_bars(result, title=" ")), width="stretch", key="demo_chart")
    except Exception as exc:  # noqa: BLE001
        show_error(exc, "Scoring")
    url = share_url(st.context.url, handle, text)
    st.caption("Share this view:")
    st.code(url, language=None)
else:
    st.caption("Choose an example above or type a text.")
