"""The `Accept: text/plain` view of a score: one bar per trait between its two pole labels."""

from __future__ import annotations

from collections.abc import Sequence

from service.schemas.score import TraitScore

CELLS = 20


def bar(score: float) -> str:
    filled = round(max(0.0, min(1.0, score)) * CELLS)
    return "#" * filled + "." * (CELLS - filled)


def chart(scores: Sequence[TraitScore]) -> str:
    if not scores:
        return ""
    neg_w = max(len(s.negative_label) for s in scores)
    pos_w = max(len(s.positive_label) for s in scores)
    lines = [
        f"{s.negative_label:>{neg_w}} [{bar(s.score)}] {s.positive_label:<{pos_w}} {s.score:.2f}  {s.name}"
        for s in scores
    ]
    return "\n".join(lines)


def render(handle: str, version_no: int, tags: Sequence[str], blocks: Sequence[Sequence[TraitScore]]) -> str:
    tag_text = f" ({', '.join(tags)})" if tags else ""
    head = f"{handle} v{version_no}{tag_text}"
    if len(blocks) == 1:
        return f"{head}\n{chart(blocks[0])}\n"
    parts = [head]
    for i, block in enumerate(blocks):
        parts.append(f"[{i}]\n{chart(block)}")
    return "\n".join(parts) + "\n"
