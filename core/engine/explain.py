"""Per-word explanations: Owen values of the words over a balanced binary partition of the text.

A word's effect is measured on the trait's axis before calibration, the raw score r of `trait_model` (-1 at
the negative pole's prototype, +1 at the positive one's; the score is sigmoid(k * r), so r is the score's
logit over the calibration slope k). The game is r of the text with some words deleted (an empty text is the
midpoint, r = 0); each word gets its Owen value, the Shapley value restricted to the coalitions a hierarchy
allows: the words are split in halves, the halves in halves, down to single words, and at each split each
half is credited with its average effect with the other half absent and present (the partition explainer of
the `shap` package with a text masker, computed here: a few lines against numba and llvmlite).

Why not leave each word out once: when three words each say "negative", removing any one changes little,
so a sentence scored 0.99 had no word coloured. Owen values also credit a word by what it does when its
neighbours are gone, so words that say the same thing share the effect instead of hiding it. The values are
additive: a text's words sum exactly to r(text) - r(empty) (and the score changes, `contribution`, to
score(text) - 0.5). Evaluations are capped at `EVALS_PER_WINDOW` a window, spent on the splits that move r
most; a part of the text left unsplit when the budget is spent shares its effect evenly among its words (a
phrase's credit), so the sums stay exact.

What a word's axis value means depends on the trait: r's scale grows with the samples, so each trait's values
are given in units of its own noise, `filler_noise`: what removing a function word ("the", "of") from a
neutral sentence does to r. strength(word) = axis(word) / filler noise, and the one rule of what the reader
sees is `coloured_units` with `shade`: a word below `NOISE_FLOOR` filler effects is not coloured, and the
colour is |strength| / `FULL_SHADE`, on the same scale for every text of every trait. A short part of the
partition whose words all push one way, each under the floor, is coloured as one phrase when together they
pass it (its Owen value is the sum of theirs): a politeness spread over many words, none enough alone, is
shown where it is, and a confident text's colour no longer hangs on one word.

A text of at most `WINDOW` words is explained whole; a longer one window by window (words 0-31, 32-63, ...),
each window its own game, up to `MAX_WORDS` words: the rule of how much of a text is explained, which the
workbench states under a longer text. A word is what the reader sees between spaces, punctuation attached.
Each variant is embedded as it is chosen: the next split to evaluate depends on what the last ones moved.
"""

from __future__ import annotations

import heapq
import itertools
import re
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from core.engine.errors import EngineError
from core.engine.types import TraitSpec
from core.engine.validation import validate_text


class Scorer(Protocol):
    """What an explanation needs of `core.engine.scorer.Scorer`, said here so this module never imports the
    scorer (whose `explain` calls it): its embedder, its traits, their axes and their calibration."""

    @property
    def embedder_id(self) -> str: ...

    @property
    def traits(self) -> Sequence[TraitSpec]: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def axis_vectors(self, vectors: np.ndarray) -> np.ndarray: ...

    def calibrate(self, axis: np.ndarray) -> np.ndarray: ...


_WORD = re.compile(r"\S+")
#: Axis position of an empty text: the midpoint between the poles, which calibrates to a score of 0.5.
NEUTRAL_AXIS = 0.0
#: Words explained together (the whole text when it is no longer than this).
WINDOW = 32
#: Words of a text explained (the rest are named as not explained where the text is shown).
MAX_WORDS = 64
#: Texts embedded per window explained, at most (the empty text is never embedded): two per word of a full
#: window, and as many for a shorter text, which goes deeper. Twice as many colour a few more texts but take
#: over twice the time, too slow for a live box; `benchmarks/explain_faithfulness.py` measures both.
EVALS_PER_WINDOW = 2 * WINDOW

#: Neutral sentences (no opinion, courtesy or offence in them) whose function words are removed one at a
#: time to measure a trait's noise: what taking out a word that carries no meaning does to its axis.
FILLER_PROBES = (
    "The meeting was moved to the second floor on Tuesday.",
    "She took the early train to the city and walked to the office.",
    "The report lists the figures for each of the four regions.",
    "We keep the spare keys in a box by the door.",
    "The library opens at nine and closes at six on weekdays.",
    "He wrote the address on the back of the envelope.",
    "The bus stops at the corner of the park and the main road.",
    "They painted the fence in the spring and the shed in the autumn.",
    "The form asks for a name, a date and a signature.",
    "A new bridge was built over the river last year.",
    "The recipe calls for two eggs and a cup of flour.",
    "The files are stored on the server in the basement.",
)
#: The function words removed from the probes (65 removals in all).
FILLER_WORDS = frozenset(
    {"the", "a", "an", "of", "to", "and", "in", "on", "at", "for", "with", "as", "by", "from", "that", "this"}
    | {"is", "was", "are", "be", "or"}
)
#: A word whose |strength| is below this many filler effects is not coloured. Measured by
#: `benchmarks/explain.py` on 40 test texts each of stanford_politeness, newssd subjectivity and convabuse,
#: with traits trained on 0 (zero-shot), 8, 30 and 100 samples per pole, with e5-small-qint8 and MiniLM
#: (24 traits): at 3 the texts' own function words are coloured at most 10 % of the time (5 % or less in
#: texts over 12 words; removing a word moves the short chatbot turns of convabuse more), and the share of
#: all words coloured stays put as the samples grow (politeness 4-9 %, subjectivity 4-12 %, abuse 22-26 %
#: with e5-small-qint8), where a floor of 0.25 on the axis coloured 0-7 % of the politeness and
#: subjectivity words at 8 and 30 samples per pole and 15-19 % at 100. Words that carry a trait clear it
#: ("fuck" -21, "bitch" -16 in abusive turns; "why" -5.1, "sorry" +3.7, "thanks" +3.3 in politeness
#: requests, on average over 150 texts with 100 samples per pole).
NOISE_FLOOR = 3.0
#: |strength| at which the colour is full, four times the floor: about one word in a hundred of politeness
#: and subjectivity texts reaches it (their 99th percentile was 5-10), and profanities in abusive turns do.
FULL_SHADE = 12.0
#: The longest phrase coloured as one: a part of the partition whose words are each under the floor.
PHRASE_WORDS = 4


def shade(strength: float) -> float:
    """How strongly a word of this strength is coloured, signed like it: 0 below `NOISE_FLOOR`,
    |strength| / `FULL_SHADE` above it, at most 1."""
    if abs(strength) < NOISE_FLOOR:
        return 0.0
    return float(np.clip(strength / FULL_SHADE, -1.0, 1.0))


def partition(n: int) -> list[tuple[int, int]]:
    """The parts (first word, end) of the balanced binary partition of `n` words that `explain` credits:
    each window of `WINDOW` words, its halves, their halves, ..., down to single words; parents first."""
    parts: list[tuple[int, int]] = []
    todo = [(start, min(start + WINDOW, n)) for start in range(0, n, WINDOW)] if n > WINDOW else [(0, n)]
    while todo:
        a, b = todo.pop(0)
        if b - a < 1:
            continue
        parts.append((a, b))
        if b - a > 1:
            mid = (a + b) // 2
            todo += [(a, mid), (mid, b)]
    return parts


class Unit(NamedTuple):
    """What the reader sees coloured: a word, or a phrase of the partition coloured as one (words
    [start, end))."""

    start: int
    end: int
    #: the unit's strength: the sum of its words' (a part's Owen value, in filler effects)
    strength: float

    @property
    def shade(self) -> float:
        return shade(self.strength)


def coloured_units(strengths: Sequence[float]) -> list[Unit]:
    """The words and phrases coloured, in text order: each word whose |strength| passes `NOISE_FLOOR`,
    then, smallest first, each part of the partition of at most `PHRASE_WORDS` words, none of them coloured
    yet, whose words all push one way and together pass the floor: a part's Owen value is what its words
    do together, so a politeness spread over a phrase, each word under the floor, is shown where it is."""
    values = np.asarray(strengths, dtype=float)
    units = [Unit(i, i + 1, float(v)) for i, v in enumerate(values) if shade(float(v)) != 0.0]
    taken = np.zeros(len(values), dtype=bool)
    taken[[u.start for u in units]] = True
    phrases = [(a, b) for a, b in partition(len(values)) if 1 < b - a <= PHRASE_WORDS]
    for a, b in sorted(phrases, key=lambda part: part[1] - part[0]):
        joint = float(values[a:b].sum())
        one_way = bool(np.all(values[a:b] > 0) or np.all(values[a:b] < 0))
        if one_way and not taken[a:b].any() and abs(joint) >= NOISE_FLOOR:
            units.append(Unit(a, b, joint))
            taken[a:b] = True
    return sorted(units)


class WordEffect(NamedTuple):
    """One word of an explanation, in text order."""

    word: str
    #: the word's Owen value on the calibrated score (saturates near 0 and 1); a text's sum to score - 0.5
    contribution: float
    #: the word's Owen value on the trait's axis; a text's (window's) sum to its r
    axis: float
    #: axis / the trait's filler noise: how many times a filler word's effect the word has (what is coloured)
    strength: float

    @property
    def shade(self) -> float:
        return shade(self.strength)


_probe_lock = threading.Lock()
# Per embedder id: the probes' embeddings, and for each removal the rows of the sentence and of the sentence
# without the word. The same for every trait and model of that embedder, so computed once a process.
_probe_vectors: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _probes(scorer: Scorer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with _probe_lock:
        found = _probe_vectors.get(scorer.embedder_id)
        if found is not None:
            return found
        texts: list[str] = []
        whole: list[int] = []
        without: list[int] = []
        for sentence in FILLER_PROBES:
            row = len(texts)
            texts.append(sentence)
            spans = [m.span() for m in _WORD.finditer(sentence)]
            for i, (a, b) in enumerate(spans):
                if sentence[a:b].lower().strip(".,") in FILLER_WORDS:
                    whole.append(row)
                    without.append(len(texts))
                    texts.append(_without(sentence, spans, i))
        # One text a call, as explanations embed theirs (see the module's docstring).
        vectors = np.vstack([scorer.embed([t]) for t in texts])
        found = (vectors, np.array(whole, dtype=np.intp), np.array(without, dtype=np.intp))
        _probe_vectors[scorer.embedder_id] = found
        return found


def filler_noise(scorer: Scorer) -> np.ndarray:
    """Per trait, the root mean square of r's change when one function word is removed from a probe
    sentence: the unit of a word's strength."""
    vectors, whole, without = _probes(scorer)
    positions = scorer.axis_vectors(vectors)
    noise: np.ndarray = np.sqrt(np.mean((positions[whole] - positions[without]) ** 2, axis=0))
    return noise


def _without(text: str, spans: list[tuple[int, int]], i: int) -> str:
    """`text` with word i and the whitespace after it removed (the last word takes the space before)."""
    start = spans[i][0]
    if i + 1 < len(spans):
        return text[:start] + text[spans[i + 1][0] :]
    return text[:start].rstrip()


def owen_values(
    value: Callable[[np.ndarray], np.ndarray], n: int, budget: int, scale: np.ndarray | None = None
) -> np.ndarray:
    """Owen values of `n` players over a balanced binary partition, one row a player, one column an output
    of `value` (a boolean mask of the players present -> a vector). At most `budget` masks are evaluated
    (at least the empty and the full one); the parts whose change in some context is largest (max over the
    outputs of |change| * `scale`, default 1; not weighted by the context's share, which goes deeper into
    the words that matter) are split first, and a part left unsplit shares its change evenly. Rows sum
    to value(all) - value(none) exactly, whatever the budget."""
    cache: dict[bytes, np.ndarray] = {}

    def f(mask: np.ndarray) -> np.ndarray:
        key = mask.tobytes()
        if key not in cache:
            cache[key] = value(mask)
        return cache[key]

    none = np.zeros(n, dtype=bool)
    f00, f11 = f(none), f(~none)
    values = np.zeros((n, len(f11)))
    weights = np.ones(len(f11)) if scale is None else scale
    order = itertools.count()
    # (-priority, tie-break, first player, end, context mask, value without the part, with it, weight)
    queue = [(-float(np.max(np.abs(f11 - f00) * weights)), next(order), 0, n, none, f00, f11, 1.0)]
    while queue:
        _, _, a, b, m00, low, high, weight = heapq.heappop(queue)
        change = weight * (high - low)
        if b - a == 1:
            values[a] += change
            continue
        mid = (a + b) // 2
        m10, m01 = m00.copy(), m00.copy()
        m10[a:mid] = True
        m01[mid:b] = True
        fresh = (m10.tobytes() not in cache) + (m01.tobytes() not in cache)
        if len(cache) + fresh > budget:
            values[a:b] += change / (b - a)  # a phrase's credit, shared by its words
            continue
        f10, f01 = f(m10), f(m01)
        half = weight / 2
        # Each half with the other absent and present: the two-player Shapley value of the split.
        for part, context, lo, hi in (
            ((a, mid), m00, low, f10),
            ((a, mid), m01, f01, high),
            ((mid, b), m00, low, f01),
            ((mid, b), m10, f10, high),
        ):
            priority = -float(np.max(np.abs(hi - lo) * weights))
            heapq.heappush(queue, (priority, next(order), part[0], part[1], context, lo, hi, half))
    return values


def explain(scorer: Scorer, text: str, max_words: int = MAX_WORDS) -> dict[str, list[WordEffect]]:
    """Per trait key, a `WordEffect` for each of the first `max_words` words, in text order."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise EngineError(f"max_words must be a positive integer, got {max_words!r}")
    text = validate_text(text)
    words = text.split()
    shown = min(len(words), max_words)
    noise = filler_noise(scorer)
    traits = len(scorer.traits)
    neutral = np.full((1, traits), NEUTRAL_AXIS)
    empty = np.concatenate([neutral[0], scorer.calibrate(neutral)[0]])
    # Split first where some trait's axis moves most in its noise units (the score's columns follow).
    scale = np.concatenate([np.divide(1.0, noise, out=np.ones_like(noise), where=noise > 0), 0 * noise])

    axis = np.zeros((shown, traits))
    contributions = np.zeros((shown, traits))
    for start in range(0, shown, WINDOW):
        window = words[start : start + WINDOW] if len(words) > WINDOW else words
        count = min(len(window), shown - start)

        def value(mask: np.ndarray, window: list[str] = window) -> np.ndarray:
            if not mask.any():
                position = empty
            else:
                kept = text if mask.all() and window is words else " ".join(np.asarray(window)[mask])
                r = scorer.axis_vectors(scorer.embed([kept]))
                position = np.concatenate([r[0], scorer.calibrate(r)[0]])
            return position

        found = owen_values(value, len(window), 1 + EVALS_PER_WINDOW, scale)
        axis[start : start + count] = found[:count, :traits]
        contributions[start : start + count] = found[:count, traits:]

    # A trait whose axis is flat (w = 0: identical pole texts) moves nothing, filler or word: strength 0.
    strength = np.divide(axis, noise, out=np.zeros_like(axis), where=noise > 0)
    return {
        trait.key: [
            WordEffect(words[i], float(contributions[i, t]), float(axis[i, t]), float(strength[i, t]))
            for i in range(shown)
        ]
        for t, trait in enumerate(scorer.traits)
    }
