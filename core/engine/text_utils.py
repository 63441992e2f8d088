"""Small text helpers shared by discovery and synthesis (no models, no I/O)."""

from __future__ import annotations

import hashlib
import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# sklearn's English list plus the stems a contraction leaves behind ("didn't" -> "didn").
STOP_WORDS: frozenset[str] = frozenset(ENGLISH_STOP_WORDS) | frozenset(
    [
        "aren",
        "couldn",
        "didn",
        "doesn",
        "don",
        "hadn",
        "hasn",
        "haven",
        "isn",
        "shouldn",
        "wasn",
        "weren",
        "won",
        "wouldn",
    ]
)
# Words of 3+ letters: digits and 1-2 letter tokens rarely name a pole.
WORD_PATTERN = r"(?u)\b[^\W\d_]{3,}\b"
_WORD_RE = re.compile(WORD_PATTERN)


def dedup_key(text: str) -> str:
    """Identity of a text for duplicate checks: its words, case-folded, ignoring punctuation and spacing."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def content_words(text: str, *, limit: int | None = None) -> list[str]:
    """Non-stop-words of `text`, lower-cased, first occurrence order, without repeats."""
    seen: dict[str, None] = {}
    for word in _WORD_RE.findall(text.lower()):
        if word not in STOP_WORDS and word not in seen:
            seen[word] = None
    words = list(seen)
    return words if limit is None else words[:limit]


def split_terms(label: str) -> list[str]:
    """A pole label's terms: "refund, delay" -> ["refund", "delay"]; a plain label is one term."""
    terms = [t.strip() for t in re.split(r"[,;/|]|\band\b|\bor\b", label) if t.strip()]
    return terms or [label.strip()]


def stable_seed(*parts: object) -> int:
    """A process-independent RNG seed from its parts (Python's `hash` is salted per process)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")
