"""Presentation helpers of the Demo page: preset texts, large bars, the shareable URL."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit, urlunsplit

import plotly.graph_objects as go

from core.client import Client
from core.contract import is_positive

MAX_URL_TEXT = 1500  # keep shared links a sane length
GENERIC_PRESETS = [
    "Thank you for reaching out. I have refunded the charge and it will appear within three days.",
    "ugh, this is the third time it broke. not buying again.",
    "The committee approved the budget on Tuesday after a lengthy debate.",
    "Absolutely love it!!! Works perfectly, five stars, would recommend to everyone.",
]


def preset_texts(client: Client, handle: str, limit: int = 6) -> list[str]:
    """Short example texts: one per pole of each trait from the model's samples, else generic ones."""
    picked: list[str] = []
    seen: set[tuple[str, bool]] = set()
    try:
        for s in client.list_samples(handle, page_size=200):
            pole = (s.trait, is_positive(s.quality))
            if pole in seen or len(s.text) > 280:
                continue
            seen.add(pole)
            picked.append(s.text)
            if len(picked) >= limit:
                break
    except Exception:  # noqa: BLE001 - presets are decoration: a model without readable samples gets generic ones
        picked = []
    return picked or GENERIC_PRESETS


def big_bars(fig: go.Figure) -> go.Figure:
    """Presentation sizing: larger fonts and taller bars."""
    n = max(1, len(fig.data[0].y) if fig.data and fig.data[0].y is not None else 1)
    fig.update_layout(font={"size": 20}, height=max(320, 150 + 95 * n), title_font={"size": 26}, bargap=0.25)
    fig.update_layout(margin={"t": 30, "b": 40})
    fig.update_yaxes(tickfont={"size": 19})
    fig.update_xaxes(tickfont={"size": 16})
    fig.update_traces(textfont_size=22, selector={"type": "bar"})
    return fig


def share_url(page_url: str | None, handle: str, text: str) -> str:
    """`page_url` with `?model=…&text=…` (the text cut to a sane length)."""
    query = urlencode({"model": handle, "text": text[:MAX_URL_TEXT]})
    if not page_url:
        return f"?{query}"
    parts = urlsplit(page_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
