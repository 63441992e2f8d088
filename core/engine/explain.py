"""Per-word explanations by occlusion: how much each word moves each trait's score.

contribution(word) = score(window) - score(window without that word), so a word that pushes the text toward
the positive pole gets a positive contribution. The window is the whole text when it has at most `WINDOW`
words; in a longer text, the `WINDOW`-word stretch the word falls in (0-31, 32-63, ...). Occluding within a
window keeps the cost of an explanation proportional to the words explained (at most 64 variants of 31 words,
about ten chunk embeddings, however long the text), and a word's effect stays visible: one word left out of
a 200-word chunk barely moves its embedding.

A word is what the reader sees between spaces, punctuation attached ("useless.", "junk,"): leaving it out
leaves out what the reader would strike. Each window and variant is embedded on its own, exactly as a score
embeds a text: an embedding computed in a batch differs from the same text's alone (int8 models quantise
activations per batch; padding differs), and those differences, as large as a small word's effect, flipped
the sign of one word in eleven on real reviews. So a text of at most `WINDOW` words gets, for each word,
exactly score(text) - score(text without the word), as the Score page would show them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from core.contract import SCORE_MIDPOINT
from core.engine.errors import EngineError
from core.engine.validation import validate_text

if TYPE_CHECKING:
    from core.engine.scorer import Scorer

_WORD = re.compile(r"\S+")
#: Score of an empty text: it says nothing about either pole.
NEUTRAL = SCORE_MIDPOINT
#: Words a word is occluded among (the whole text when it is no longer than this).
WINDOW = 32


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

    if len(words) <= WINDOW:
        windows = [text]
        variants = [(0, _without(text, spans, i)) for i in range(shown)]  # (window index, window text)
    else:
        windows = [" ".join(words[a : a + WINDOW]) for a in range(0, shown, WINDOW)]
        variants = []
        for i in range(shown):
            j = i // WINDOW
            rest = words[j * WINDOW : i] + words[i + 1 : (j + 1) * WINDOW]
            variants.append((j, " ".join(rest)))

    batch = windows + [v for _, v in variants if v]
    # One text an embedder call, as `Scorer.score` embeds a text (see the module's docstring): about 1.3x
    # the time of one batch, for explanations whose signs can be trusted.
    scores = scorer.score_vectors(np.vstack([scorer.embed([t]) for t in batch]))
    base = scores[: len(windows)]

    contributions = np.empty((shown, len(scorer.traits)))
    next_row = len(windows)
    for i, (j, variant) in enumerate(variants):
        if variant:
            without = scores[next_row]
            next_row += 1
        else:  # the word was its window's only word
            without = np.full(len(scorer.traits), NEUTRAL)
        contributions[i] = base[j] - without

    return {
        trait.key: [(words[i], float(contributions[i, t])) for i in range(shown)]
        for t, trait in enumerate(scorer.traits)
    }
