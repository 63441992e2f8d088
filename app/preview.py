"""Local preview of a draft (trained by `core.engine.preview.draft_scorer`) and word highlighting."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from typing import Any, cast

from core.client import Client
from core.contract import Aggregation
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
            # One of AGGREGATIONS, as the service states it (the client keeps the value as text)
            aggregation=cast(Aggregation, t.aggregation or "mean"),
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


_WORD = re.compile(r"\S+")  # a word as the engine explains it: what the reader sees between spaces


def highlight_html(text: str, contributions: Sequence[tuple[str, float] | dict[str, Any]]) -> str:
    """The text with each explained word shaded: blue towards the positive pole, orange towards the
    negative one, stronger for larger contributions.

    The explanation's words are the text's words in order, punctuation attached (`core.engine.explain`), so
    each word gets its own contribution by position: "useless." is shaded as the engine scored it, and a word
    said twice shows each time what that occurrence did."""
    pairs = [
        (str(item["word"]), float(item["contribution"]))
        if isinstance(item, dict)
        else (str(item[0]), item[1])
        for item in contributions
    ]
    top = max((abs(v) for _, v in pairs), default=0.0) or 1.0
    parts: list[str] = []
    end = 0
    for i, match in enumerate(_WORD.finditer(text)):
        parts.append(html.escape(text[end : match.start()]))
        end = match.end()
        word = match.group()
        escaped = html.escape(word)
        if i >= len(pairs) or pairs[i][0] != word:  # past the words explained (the first 64)
            parts.append(escaped)
            continue
        value = pairs[i][1]
        alpha = 0.15 + 0.6 * abs(value) / top
        rgb = "59,125,216" if value > 0 else "217,128,74"
        parts.append(
            f'<span title="{value:+.3f}" style="background: rgba({rgb},{alpha:.2f}); '
            f'border-radius: 3px; padding: 0 2px">{escaped}</span>'
        )
    parts.append(html.escape(text[end:]))
    return '<div style="line-height: 1.9; font-size: 1.05rem">' + "".join(parts) + "</div>"
