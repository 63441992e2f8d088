"""Presentation helpers of the Demo page: preset texts, large bars, the shareable URL."""

from __future__ import annotations

import contextlib
import os
import threading
from urllib.parse import urlencode, urlsplit, urlunsplit

import plotly.graph_objects as go
import streamlit as st

from core.client import Client, Sample
from core.contract import Pole, pole_of

MAX_URL_TEXT = 1500  # keep shared links a sane length
MAX_PRESET_CHARS = 280  # an example longer than this makes no button
EXAMPLE_POLES: tuple[Pole, Pole] = ("positive", "negative")  # each trait's examples, in this order
ENV_PUBLIC_URL = "SCORING_PUBLIC_URL"  # the workbench's public address, for shared links
PUBLIC_URL_KEY = "public_url"  # session_state: the same, entered on the Settings page
GENERIC_PRESETS = [
    "Thank you for reaching out. I have refunded the charge and it will appear within three days.",
    "ugh, this is the third time it broke. not buying again.",
    "The committee approved the budget on Tuesday after a lengthy debate.",
    "Absolutely love it!!! Works perfectly, five stars, would recommend to everyone.",
]


def preset_texts(samples: list[Sample], limit: int = 6) -> list[str]:
    """Example texts that show both poles: for each trait, in the order the samples name them, its most
    positive sample (the highest quality) and its most negative one (the lowest), the first of equals; a
    neutral sample (exactly in the middle) is never one, nor a text too long for a button. Without any such
    sample, generic texts. (The first sample of each pole was no example of it when the file began with
    graded labels such as 0.6 and 0.4.)"""
    extreme: dict[tuple[str, Pole], Sample] = {}
    for s in samples:
        pole = pole_of(s.quality)
        if pole == "neutral" or not s.text or len(s.text) > MAX_PRESET_CHARS:
            continue
        kept = extreme.get((s.trait, pole))
        # How far past the other: the positive pole's examples rise with quality, the negative's fall.
        if kept is None or (s.quality - kept.quality) * (1 if pole == "positive" else -1) > 0:
            extreme[(s.trait, pole)] = s
    traits = dict.fromkeys(trait for trait, _ in extreme)
    picked: list[str] = []
    for trait in traits:
        for pole in EXAMPLE_POLES:
            example = extreme.get((trait, pole))
            if example is not None and example.text not in picked:
                picked.append(example.text)
    return picked[:limit] or GENERIC_PRESETS


@st.cache_resource(show_spinner=False)
def _warmed() -> set[str]:
    return set()


def warm_up(client: Client, handle: str) -> None:
    """Score one text for `handle` in the background, once per workbench process.

    The service loads a version's scorer (and MiniLM) on its first score: done while the presenter starts
    typing, the first pause gets its bars at once instead of after that load.
    """
    done = _warmed()
    if handle in done:
        return
    done.add(handle)

    def score() -> None:
        with contextlib.suppress(Exception):  # a warm-up only: the page reports real failures itself
            client.score(handle, "Hello")

    threading.Thread(target=score, name=f"warm-{handle}", daemon=True).start()


def blank_chart() -> go.Figure:
    """A chart with nothing to see (no axes, 10 px: Plotly's least), so the browser loads Plotly early."""
    fig = go.Figure()
    fig.update_layout(height=10, margin={"t": 0, "b": 0, "l": 0, "r": 0})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def big_bars(fig: go.Figure) -> go.Figure:
    """Presentation sizing: larger fonts and taller bars."""
    n = max(1, len(fig.data[0].y) if fig.data and fig.data[0].y is not None else 1)
    fig.update_layout(font={"size": 20}, height=max(320, 150 + 95 * n), title_font={"size": 26}, bargap=0.25)
    fig.update_layout(margin={"t": 30, "b": 40})
    fig.update_yaxes(tickfont={"size": 19})
    fig.update_xaxes(tickfont={"size": 16})
    fig.update_traces(textfont_size=22, selector={"type": "bar"})
    return fig


def public_base_url() -> str | None:
    """The workbench's public address for shared links: the Settings page's, else `SCORING_PUBLIC_URL`."""
    return (st.session_state.get(PUBLIC_URL_KEY) or os.environ.get(ENV_PUBLIC_URL) or "").strip() or None


def share_url(page_url: str | None, handle: str, text: str, public_base: str | None = None) -> str:
    """A link to the Demo page with `?model=…&text=…` (the text cut to a sane length).

    On `public_base` (the workbench's public address) when one is set, else on the page's own URL.
    """
    query = urlencode({"model": handle, "text": text[:MAX_URL_TEXT]})
    if public_base:
        return f"{public_base.rstrip('/')}/demo?{query}"
    if not page_url:
        return f"?{query}"
    parts = urlsplit(page_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def is_local(url: str) -> bool:
    """A link only this computer can open (loopback), or a bare query without an address."""
    host = urlsplit(url).hostname
    return host is None or host == "localhost" or host.startswith("127.") or host == "::1"
