"""The engine tests' small synthetic sentiment corpus and an embedder that counts its calls.

The corpus is built from word lists so the hashing embedder (which sees shared words and
character n-grams) can generalise from training texts to new ones, as a real embedder would.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from core.embedders.base import Embedder
from core.engine import Sample, TraitSpec

POSITIVE_WORDS = [
    "wonderful",
    "great",
    "lovely",
    "excellent",
    "delightful",
    "fantastic",
    "pleasant",
    "superb",
    "happy",
    "kind",
    "brilliant",
    "charming",
]
NEGATIVE_WORDS = [
    "awful",
    "terrible",
    "horrible",
    "dreadful",
    "nasty",
    "rude",
    "bad",
    "poor",
    "sad",
    "angry",
    "miserable",
    "disgusting",
]
SUBJECTS = [
    "the hotel",
    "our dinner",
    "this phone",
    "the service",
    "my trip",
    "the staff",
    "that movie",
    "the room",
    "their food",
    "the show",
    "the concert",
    "this book",
    "the garden",
    "the train ride",
]
FRAMES = [
    "{s} was {a} and {b}",
    "honestly {s} felt {a}, really {b}",
    "I think {s} is {a} and quite {b}",
    "{s} turned out {a}; {b} overall",
    "we found {s} {a} and {b} today",
]
SENTIMENT = TraitSpec("sentiment", "Sentiment", "positive", "negative")


def make_texts(words: Sequence[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        a, b = rng.sample(list(words), 2)
        text = rng.choice(FRAMES).format(s=rng.choice(SUBJECTS), a=a, b=b)
        if text not in out:
            out.append(text)
    return out


def sentiment_samples(
    n_pos: int = 12, n_neg: int = 12, seed: int = 0, trait: str = "sentiment"
) -> list[Sample]:
    pos = make_texts(POSITIVE_WORDS, n_pos, seed)
    neg = make_texts(NEGATIVE_WORDS, n_neg, seed + 1000)
    return [Sample(trait, t, 1.0, id=i) for i, t in enumerate(pos)] + [
        Sample(trait, t, 0.0, id=1000 + i) for i, t in enumerate(neg)
    ]


class CountingEmbedder:
    """The real embedder, counting how often and with what it is called."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.id = inner.id
        self.dim = inner.dim
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.encode(texts)


class Corpus:
    """The helpers above, handed to tests as the `corpus` fixture."""

    POSITIVE_WORDS = POSITIVE_WORDS
    NEGATIVE_WORDS = NEGATIVE_WORDS
    SENTIMENT = SENTIMENT
    make_texts = staticmethod(make_texts)
    sentiment_samples = staticmethod(sentiment_samples)
