"""A quality picker that speaks in a trait's poles: "0 · casual" … "1 · formal", not a bare 0 to 1."""

from __future__ import annotations

from typing import Any

from app.ui.inert import escape_md
from core.client import Trait

STEPS = [round(i * 0.05, 2) for i in range(21)]


def quality_words(trait: Trait) -> dict[float, str]:
    """What each end (and the middle) of the scale means for `trait`."""
    return {
        0.0: f"0 · {trait.negative_label or 'negative pole'}",
        0.5: "0.5 · in between",
        1.0: f"1 · {trait.positive_label or 'positive pole'}",
    }


def quality_slider(container: Any, trait: Trait, *, key: str, value: float = 1.0) -> float:
    """A 0-1 slider in steps of 0.05 whose ends carry the trait's pole labels."""
    words = quality_words(trait)
    return float(
        container.select_slider(
            f"Quality ({escape_md(words[0.0])} … {escape_md(words[1.0])})",
            options=STEPS,
            value=value,
            format_func=lambda q: words.get(q, f"{q:g}"),
            key=key,
        )
    )
