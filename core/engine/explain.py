"""Per-word explanations by occlusion: how far each word moves the text along each trait's axis.

A word's effect is measured on the trait's axis before calibration, the raw score r of `trait_model` (-1 at
the negative pole's prototype, +1 at the positive one's; the score is sigmoid(k * r), so r is the score's
logit over the calibration slope k): axis(word) = r(window) - r(window without the word). The calibrated
score is no measure of a word: near 0 or 1 it barely moves, so the words of a text scored 0.05 moved it by
about 0.005 each, and shading them relative to the sentence's largest such change made noise look like
meaning. The score's change, contribution(word) = score(window) - score(window without the word), is
reported beside it (what scoring the two texts shows), with the same sign.

What a word's axis change means depends on the trait: r's scale grows with the samples (an axis fitted on
100 samples per pole stretches the texts four times as far as one fitted on 8), so no constant on r, nor on
the logit k * r, separates meaning from noise for every trait. Each trait's changes are therefore given in
units of its own noise, `filler_noise`: what removing a function word ("the", "of") from a neutral sentence
does to r. strength(word) = axis(word) / filler noise, and the one rule of what the reader sees is `shade`:
a word below `NOISE_FLOOR` filler effects is not coloured, and the colour is |strength| / `FULL_SHADE`, on
the same scale for every text of every trait, never stretched to the largest word of a sentence.

The window is the whole text when it has at most `WINDOW` words; in a longer text, the `WINDOW`-word stretch
the word falls in (0-31, 32-63, ...). Occluding within a window keeps the cost of an explanation
proportional to the words explained (at most 64 variants of 31 words, about ten chunk embeddings, however
long the text), and a word's effect stays visible: one word left out of a 200-word chunk barely moves its
embedding.

A word is what the reader sees between spaces, punctuation attached ("useless.", "junk,"): leaving it out
leaves out what the reader would strike. Each window and variant is embedded on its own, exactly as a score
embeds a text: an embedding computed in a batch differs from the same text's alone (int8 models quantise
activations per batch; padding differs), and those differences, as large as a small word's effect, flipped
the sign of one word in eleven on real reviews. So a text of at most `WINDOW` words gets, for each word,
exactly r(text) - r(text without the word), as scoring the two texts would give them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
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
#: Words a word is occluded among (the whole text when it is no longer than this).
WINDOW = 32

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


def shade(strength: float) -> float:
    """How strongly a word of this strength is coloured, signed like it: 0 below `NOISE_FLOOR`,
    |strength| / `FULL_SHADE` above it, at most 1."""
    if abs(strength) < NOISE_FLOOR:
        return 0.0
    return float(np.clip(strength / FULL_SHADE, -1.0, 1.0))


class WordEffect(NamedTuple):
    """One word of an explanation, in text order."""

    word: str
    #: score(window) - score(window without the word): the calibrated score's change (saturates near 0 and 1)
    contribution: float
    #: r(window) - r(window without the word): the change on the trait's axis
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


def explain(scorer: Scorer, text: str, max_words: int = 64) -> dict[str, list[WordEffect]]:
    """Per trait key, a `WordEffect` for each of the first `max_words` words, in text order."""
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
    positions = scorer.axis_vectors(np.vstack([scorer.embed([t]) for t in batch]))
    base = positions[: len(windows)]

    without = np.empty((shown, len(scorer.traits)))
    next_row = len(windows)
    for i, (_, variant) in enumerate(variants):
        if variant:
            without[i] = positions[next_row]
            next_row += 1
        else:  # the word was its window's only word
            without[i] = NEUTRAL_AXIS
    window_of = np.array([j for j, _ in variants], dtype=np.intp)
    axis = base[window_of] - without
    contributions = scorer.calibrate(base[window_of]) - scorer.calibrate(without)
    noise = filler_noise(scorer)
    # A trait whose axis is flat (w = 0: identical pole texts) moves nothing, filler or word: strength 0.
    strength = np.divide(axis, noise, out=np.zeros_like(axis), where=noise > 0)

    return {
        trait.key: [
            WordEffect(words[i], float(contributions[i, t]), float(axis[i, t]), float(strength[i, t]))
            for i in range(shown)
        ]
        for t, trait in enumerate(scorer.traits)
    }
