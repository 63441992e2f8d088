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
from core.engine.explain import NOISE_FLOOR, WordEffect, coloured_units
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
_TOWARDS_POSITIVE = "59,125,216"  # blue
_TOWARDS_NEGATIVE = "217,128,74"  # orange: the pair stays apart for red-green colour blindness
_FULL_ALPHA = 0.75  # the background of a word at full shade; the text stays readable on it


def _mark(rgb: str, alpha: float, inner: str, title: str = "") -> str:
    """`inner` (escaped HTML) on a background of the colour `rgb` at opacity `alpha`."""
    tip = f' title="{html.escape(title)}"' if title else ""
    style = f"background: rgba({rgb},{alpha:.2f}); border-radius: 3px; padding: 0 2px"
    return f'<span{tip} style="{style}">{inner}</span>'


def _legend(positive_label: str, negative_label: str) -> str:
    """What a colour means, in one line under the text."""
    towards_positive = _mark(_TOWARDS_POSITIVE, _FULL_ALPHA, "blue")
    towards_negative = _mark(_TOWARDS_NEGATIVE, _FULL_ALPHA, "orange")
    return (
        f"{towards_positive} pushes towards “{html.escape(positive_label)}”, {towards_negative} towards "
        f"“{html.escape(negative_label)}”, darker is stronger. Uncoloured: too small to matter (under "
        f"{NOISE_FLOOR:g}× what removing a filler word like “the” does)."
    )


def highlight_html(
    text: str,
    effects: Sequence[WordEffect | dict[str, Any]],
    positive_label: str,
    negative_label: str,
) -> str:
    """The text with each coloured unit (`core.engine.explain.coloured_units`: a word, or a phrase whose
    words move the text only together) shaded by its strength: blue towards the positive pole, orange
    towards the negative one, on one fixed scale for every text; a word too small to matter is left
    uncoloured. A legend under the text says so. Each word's tooltip gives its strength, a phrase's its
    joint strength.

    `effects` is the engine's explanation of one trait or the service's (`{"word", …, "strength"}`).
    Its words are the text's words in order, punctuation attached (`core.engine.explain`), so each word gets
    its own effect by position: "useless." is shaded as the engine scored it, and a word said twice shows
    each time what that occurrence did."""
    pairs = [
        (str(item["word"]), float(item["strength"])) if isinstance(item, dict) else (item.word, item.strength)
        for item in effects
    ]
    matches = list(_WORD.finditer(text))
    explained = 0  # the words explained: the first ones, as long as they are the text's
    while explained < min(len(pairs), len(matches)) and pairs[explained][0] == matches[explained].group():
        explained += 1
    units = {u.start: u for u in coloured_units([strength for _, strength in pairs[:explained]])}
    parts: list[str] = []
    end = i = 0
    phrases = False
    while i < len(matches):
        match = matches[i]
        parts.append(html.escape(text[end : match.start()]))
        unit = units.get(i)
        if unit is None or i >= explained:
            escaped = html.escape(match.group())
            if i < explained:
                tip = f"{pairs[i][1]:+.1f}× a filler word: too small to matter"
                parts.append(f'<span title="{tip}">{escaped}</span>')  # no colour
            else:  # past the words explained (the first 64)
                parts.append(escaped)
            end, i = match.end(), i + 1
            continue
        last = matches[unit.end - 1]
        label = positive_label if unit.strength > 0 else negative_label
        rgb = _TOWARDS_POSITIVE if unit.strength > 0 else _TOWARDS_NEGATIVE
        alpha = _FULL_ALPHA * abs(unit.shade)
        if unit.end - unit.start == 1:
            tip = f"{unit.strength:+.1f}× a filler word: towards {label}"
        else:
            phrases = True
            each = ", ".join(f"{strength:+.1f}" for _, strength in pairs[unit.start : unit.end])
            tip = f"{unit.strength:+.1f}× a filler word together ({each}): towards {label}"
        parts.append(_mark(rgb, alpha, html.escape(text[match.start() : last.end()]), tip))
        end, i = last.end(), unit.end
    parts.append(html.escape(text[end:]))
    legend = _legend(positive_label, negative_label)
    if phrases:
        legend += (
            " A phrase coloured as one moves the text that much only together (each of its words is under the"
            " floor alone)."
        )
    if pairs and not units:
        legend += (
            " No single word or phrase moves this text that much: its score comes from the text as a whole."
        )
    if explained < len(matches):
        legend += f" Only the first {explained} words are explained."
    return (
        '<div style="line-height: 1.9; font-size: 1.05rem">'
        + "".join(parts)
        + '</div><div style="font-size: 0.85rem; opacity: 0.75; margin-top: 0.3rem">'
        + legend
        + "</div>"
    )
