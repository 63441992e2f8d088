"""Per-word explanations by occlusion: how much each word moves each trait's score.

contribution(word) = score(text) - score(text without that word), so a word that pushes the
text toward the positive pole gets a positive contribution. All variants are embedded in one
batch. For a text longer than one chunk, a word is removed from its own chunk only and the
other chunks are kept as they are, so the chunk layout (and the aggregation) stays the same.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from core.engine.errors import EngineError
from core.engine.validation import validate_text

if TYPE_CHECKING:
    from core.engine.scorer import Scorer

_WORD = re.compile(r"\S+")
#: Score of an empty text: it says nothing about either pole.
NEUTRAL = 0.5


def _without(text: str, spans: list[tuple[int, int]], i: int) -> str:
    """`text` with word i and the whitespace after it removed (the last word takes the space before)."""
    start = spans[i][0]
    if i + 1 < len(spans):
        return text[:start] + text[spans[i + 1][0] :]
    return text[:start].rstrip()


def explain(scorer: Scorer, text: str, max_words: int = 64) -> dict[str, list[tuple[str, float]]]:
    """Per trait key, (word, contribution) for the first `max_words` words, in text order."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise EngineError(f"max_words must be a positive integer, got {max_words!r}")
    text = validate_text(text)
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b] for a, b in spans]
    shown = min(len(words), max_words)
    size = scorer.chunk_words

    if len(words) <= size:
        base_chunks = [text]
        variants = [(0, _without(text, spans, i)) for i in range(shown)]  # (chunk index, chunk text)
    else:
        base_chunks = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
        variants = []
        for i in range(shown):
            j = i // size
            rest = words[j * size : i] + words[i + 1 : (j + 1) * size]
            variants.append((j, " ".join(rest)))

    batch = base_chunks + [v for _, v in variants if v]
    scores = scorer.score_vectors(scorer.embed(batch))
    base_rows = scores[: len(base_chunks)]
    base = scorer.aggregate(base_rows)

    contributions = np.empty((shown, len(scorer.traits)))
    next_row = len(base_chunks)
    for i, (j, variant) in enumerate(variants):
        if variant:
            rows = base_rows.copy()
            rows[j] = scores[next_row]
            next_row += 1
        else:
            # The word was its chunk's only word: removing it removes the chunk.
            rows = np.delete(base_rows, j, axis=0)
        without = scorer.aggregate(rows) if len(rows) else np.full(len(scorer.traits), NEUTRAL)
        contributions[i] = base - without

    return {
        trait.key: [(words[i], float(contributions[i, t])) for i in range(shown)]
        for t, trait in enumerate(scorer.traits)
    }
