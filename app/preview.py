"""Local preview of a draft (trained by `core.engine.preview.draft_scorer`) and word highlighting."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

from core.client import Client
from core.embedders.base import Embedder
from core.engine import Sample, Scorer, TraitSpec
from core.engine.preview import draft_scorer as engine_draft_scorer


def draft_scorer(client: Client, handle: str, embedder: Embedder) -> tuple[Scorer, list[str], str]:
    """`core.engine.preview.draft_scorer` on the model's stored samples; also a fingerprint of the data it
    was trained on (to reuse it while nothing changed)."""
    traits = client.list_traits(handle)
    samples = list(client.list_samples(handle, page_size=500))
    specs = [
        TraitSpec(
            key=t.key,
            name=t.name,
            positive_label=t.positive_label,
            negative_label=t.negative_label,
            description=t.description or "",
            aggregation=(t.aggregation or "mean"),  # type: ignore[arg-type]
        )
        for t in traits
    ]
    data = [Sample(trait=s.trait, text=s.text, quality=s.quality, id=s.id) for s in samples]
    scorer, skipped = engine_draft_scorer(specs, data, embedder=embedder)
    return scorer, skipped, data_fingerprint(traits, samples)


def data_fingerprint(traits: list[Any], samples: list[Any]) -> str:
    h = hashlib.sha256()
    for t in traits:
        h.update(f"{t.key}|{t.name}|{t.positive_label}|{t.negative_label}|{t.description}\n".encode())
    for s in samples:
        h.update(f"{s.id}|{s.quality}\n".encode())
    return h.hexdigest()


_TOKEN = re.compile(r"\w+(?:'\w+)?|\W+", re.UNICODE)


def highlight_html(text: str, contributions: list[tuple[str, float]] | list[dict[str, Any]]) -> str:
    """The text with each explained word shaded: blue towards the positive pole, orange towards the
    negative one, stronger for larger contributions."""
    weights: dict[str, float] = {}
    for item in contributions:
        word, value = (item["word"], item["contribution"]) if isinstance(item, dict) else item
        weights.setdefault(str(word).lower(), float(value))
    top = max((abs(v) for v in weights.values()), default=0.0) or 1.0
    parts = []
    for token in _TOKEN.findall(text):
        value = weights.get(token.lower())
        escaped = html.escape(token)
        if value is None or not token.strip():
            parts.append(escaped)
            continue
        alpha = 0.15 + 0.6 * abs(value) / top
        rgb = "59,125,216" if value > 0 else "217,128,74"
        parts.append(
            f'<span title="{value:+.3f}" style="background: rgba({rgb},{alpha:.2f}); '
            f'border-radius: 3px; padding: 0 2px">{escaped}</span>'
        )
    return '<div style="line-height: 1.9; font-size: 1.05rem">' + "".join(parts) + "</div>"
