"""The phrases that set the two ends of a discovered axis apart: class-based TF-IDF over words and two-word
phrases.

A person names the difference between two groups of texts by what one group says often and the other
rarely ("thank you", "prime minister"), not by the single heaviest word ("url", "government"). Each end of
the axis is a class, so a phrase common at both ends weighs little. A phrase's weight at an end is its share
of that end's phrase occurrences times `log(1 + A / f)` (A: the mean number of occurrences per class, f: the
phrase's occurrences over all classes). A phrase qualifies for an end only when it occurs in at least two of
its texts (one when an end is tiny) and in at least three times the share of texts there as at the other
end. Stop words (and auxiliaries and fillers such as "does", "said", "new"), digits, words under three letters
and URL fragments never count; a two-word phrase is made of adjacent words that are neither. A chosen phrase
shares no word with one chosen before it, and a word yields to a two-word phrase holding it when that phrase
covers most of its uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from core.engine.text_utils import STOP_WORDS, WORD_PATTERN

#: Web addresses and the words they leave behind: a link names no pole.
_URL_RE = re.compile(r"(?i)(?:https?://|www\.)\S+|\b[\w.-]+\.(?:com|org|net|edu|gov|io|html?|php)\b\S*")
URL_WORDS = frozenset({"http", "https", "www", "com", "org", "net", "html", "htm", "php", "url", "urls"})
_WORD_RE = re.compile(WORD_PATTERN)
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
#: Auxiliaries and fillers scikit-learn's English list lacks: they carry grammar, not what a text is about.
#: Verbs of saying, knowing and wanting ("said", "know", "want"), and vague words ("new", "like", "far",
#: "way") are in every kind of text; an axis named "new & said" names nothing its ends differ in.
FILLER_WORDS = frozenset(
    {"does", "did", "doing", "done", "got", "gets", "getting", "just", "really", "actually", "let", "lets"}
    | {"say", "says", "said", "saying", "tell", "tells", "told", "telling", "asked", "according"}
    | {"know", "knows", "knew", "think", "thinks", "thought", "want", "wants", "wanted", "like", "likes"}
    | {"make", "makes", "made", "making", "use", "used", "using", "need", "needs", "needed", "going"}
    | {"come", "came", "goes", "went", "look", "looks", "looking", "take", "took", "able", "sure", "maybe"}
    | {"new", "far", "way", "thing", "things", "lot", "lots", "good", "right", "yes", "yeah", "okay", "ok"}
)
_SKIP = STOP_WORDS | URL_WORDS | FILLER_WORDS
#: A two-word phrase replaces its word when it covers at least this share of the word's texts at that end.
BIGRAM_COVER = 0.6
#: A phrase's share of texts at its end must be at least this many times its share at the other end: a
#: name says what one end has and the other lacks.
CONTRAST = 3.0


def _phrases(text: str) -> list[str]:
    # Every token, punctuation and numbers too, so that a phrase is two words that really stand together.
    tokens = [t.lower() for t in _TOKEN_RE.findall(_URL_RE.sub(" . ", text))]
    keep = [bool(_WORD_RE.fullmatch(t)) and t not in _SKIP for t in tokens]
    out = [w for w, k in zip(tokens, keep, strict=True) if k]
    out += [f"{a} {b}" for a, b, ka, kb in zip(tokens, tokens[1:], keep, keep[1:], strict=False) if ka and kb]
    return out


def pole_phrases(
    texts: Sequence[str], top: np.ndarray, bottom: np.ndarray, n: int
) -> tuple[list[str], list[str]]:
    """Up to `n` phrases most distinctive of the `top` texts and of the `bottom` texts, strongest first."""
    vec = CountVectorizer(analyzer=_phrases, binary=True)
    try:
        m = vec.fit_transform(texts).tocsr()
    except ValueError:  # no phrase at all
        return [], []
    vocab = [str(v) for v in vec.get_feature_names_out()]
    groups = [top, bottom]
    df = np.vstack([np.asarray(m[g].sum(axis=0)).ravel() for g in groups])  # texts holding each phrase
    total = df.sum(axis=1, keepdims=True)
    tf = df / np.where(total > 0, total, 1)
    idf = np.log1p(total.mean() / np.maximum(df.sum(axis=0), 1))
    weight = tf * idf
    share = df[:2] / np.array([[len(top)], [len(bottom)]])
    out: list[list[str]] = []
    for end, other in ((0, 1), (1, 0)):
        least = 2 if len(groups[end]) >= 4 else 1
        ok = (df[end] >= least) & (share[end] >= CONTRAST * share[other]) & (weight[end] > 0)
        ranked = sorted(np.flatnonzero(ok), key=lambda i: (-weight[end][i], vocab[i]))
        chosen: list[str] = []
        used: set[str] = set()
        for i in ranked:
            phrase = vocab[i]
            if " " not in phrase:  # a two-word phrase that covers most of the word's uses says more
                wider = [
                    j
                    for j in ranked
                    if " " in vocab[j]
                    and phrase in vocab[j].split()
                    and df[end][j] >= BIGRAM_COVER * df[end][i]
                ]
                if wider:
                    phrase = vocab[wider[0]]
            words = set(phrase.split())
            if words & used:
                continue
            chosen.append(phrase)
            used |= words
            if len(chosen) == n:
                break
        out.append(chosen)
    return out[0], out[1]
