"""The Traits page's zero-shot preview: the scores a trait being typed would give a few probe texts."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app.ui.inert import escape_md
from app.ui.widgets import show_error
from core.client import Client, TransportError

# Probe texts for the zero-shot preview: varied in tone and topic, editable on the page.
PROBES = (
    "Thank you so much for your quick and helpful reply!",
    "This is the third time I have asked. Fix it now.",
    "The meeting has been moved to Thursday at 10am.",
    "lol ok whatever, see u later",
    "I am worried the new policy will hurt small businesses.",
)


PREVIEW_LOADING = (
    "The service is still loading its model, so the preview did not come in time. It shows here once the "
    "model is ready; adding the trait does not wait for it."
)


def timed_out(exc: TransportError) -> bool:
    """A request the service did not answer in time (busy loading its model), not one that found no one."""
    return "Timeout" in str(exc) or "timed out" in str(exc)


def zero_shot_preview(client: Client, handle: str, spec: dict[str, str]) -> None:
    """Scores the trait being typed would give the probe texts, trained zero-shot (from its labels alone)."""
    with st.expander("Probe texts (one a line)"):
        raw = st.text_area(
            "Probe texts", "\n".join(PROBES), key="trait_probe_texts", label_visibility="collapsed"
        )
    probes = [line.strip() for line in raw.splitlines() if line.strip()][:20]
    if not probes:
        return
    cache: dict[str, list[float]] = st.session_state.setdefault("trait_preview_cache", {})
    key = json.dumps([handle, spec, probes])
    if key not in cache:
        if len(cache) > 100:  # one entry per edit: keep the session small
            cache.clear()
        try:
            cache[key] = client.preview_trait(handle, spec, probes).scores
        except TransportError as exc:
            if not timed_out(exc):
                show_error(exc, "Previewing the trait")
                return
            # The service embeds the probes with a model it loads on first use (40-75 s): not a failure.
            st.info(PREVIEW_LOADING, icon=":material/hourglass_top:")
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message on the page
            show_error(exc, "Previewing the trait")
            return
    st.caption(
        f"Zero-shot preview: how *{escape_md(spec['negative_label'])}* (0) or "
        f"*{escape_md(spec['positive_label'])}* (1) these texts score from the labels and description alone, "
        "what the trait gives before it has samples."
    )
    st.dataframe(
        pd.DataFrame({"text": probes, "score": cache[key]}),
        hide_index=True,
        width="stretch",
        column_config={
            "score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0, format="%.2f")
        },
    )
