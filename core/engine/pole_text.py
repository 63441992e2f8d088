"""Pole texts: what a trait's own words say about its axis.

Each pole is phrased as a handful of short sentences written from the trait's pole label (each of its
terms), its name and its description, with the same frames on both poles, so that the frames cancel in
the difference of the two poles' mean embeddings and what is left is the labels' direction. That
direction serves twice:

* **zero-shot**: a trait without samples is scored on it (`zero_shot_axis`);
* **prior**: with samples, the sample axis is pulled toward it (see `core.engine.trait_model`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.engine.generators import _is_adjective
from core.engine.text_utils import split_terms
from core.engine.trait_model import K_MIN, fit_calibration, raw_scores
from core.engine.types import TraitSpec

#: Frames for an adjective-like pole term ("polite"); {l} the term, {n} the trait's name.
_ADJECTIVE_FRAMES = (
    "{l}.",
    "This text is {l}.",
    "A {l} message.",
    "The tone here is {l}.",
    "Someone wrote something {l}.",
    "It sounds {l}.",
    "This is a {l} remark.",
    "The writer is being {l}.",
    "{n}: {l}.",
)
#: Frames for a noun-like pole term ("refund delays").
_TOPIC_FRAMES = (
    "{l}.",
    "This text is about {l}.",
    "A message about {l}.",
    "It is all about {l}.",
    "Someone wrote about {l}.",
    "The writer talks about {l}.",
    "This remark concerns {l}.",
    "It mentions {l}.",
    "{n}: {l}.",
)


def _names(sentence: str, label: str) -> bool:
    """Whether `sentence` names the pole `label` (any of its terms, as whole words)."""
    return any(re.search(rf"\b{re.escape(t)}\b", sentence, re.I) for t in split_terms(label) if t)


def pole_sentences(trait: TraitSpec) -> tuple[list[str], list[str]]:
    """The description's sentences that name one pole and not the other, per pole."""
    text = " ".join(trait.description.split())
    sentences = [x.strip() for x in re.split(r"(?<=[.;!?])\s+", text) if x.strip()]
    pos, neg = trait.positive_label.strip(), trait.negative_label.strip()
    return (
        [x for x in sentences if _names(x, pos) and not _names(x, neg)],
        [x for x in sentences if _names(x, neg) and not _names(x, pos)],
    )


#: Where a pole's defining sentence lists what the pole covers: commas, semicolons, colons, "or", "and".
_ITEM_SPLIT = re.compile(r"[,;:]|\b(?:or|and)\b", re.I)


def pole_items(sentences: list[str], label: str) -> list[str]:
    """What a pole's own sentences say it covers, one item each, without the pole's label words.

    "Subjective sentences express the writer's opinion, judgement, emotion or speculation." gives
    "sentences express the writer's opinion", "judgement", "emotion", "speculation": each concept
    counts once in the pole's mean (a prompt ensemble) instead of the sentence's first words and its
    label word dominating one embedding (a small embedder may know "subjective" poorly).
    """
    items = []
    for sentence in sentences:
        for term in split_terms(label):
            if term:
                sentence = re.sub(rf"\b{re.escape(term)}\b", " ", sentence, flags=re.I)
        items += [" ".join(x.split()).strip(" .!?") for x in _ITEM_SPLIT.split(sentence)]
    return [x for x in items if any(c.isalnum() for c in x)]


def pole_texts(trait: TraitSpec, positive: bool) -> list[str]:
    """The texts that stand for one pole of `trait` (deterministic).

    When the description has a sentence naming each pole ("Polite requests thank ... Impolite requests
    demand ..."), those sentences define the poles, the user's own words about each side: the pole
    label, and the items those sentences list (`pole_items`). Otherwise the pole label in a few frames
    shared by both poles, and the whole description in both.
    """
    own = pole_sentences(trait)
    label = (trait.positive_label if positive else trait.negative_label).strip()
    if own[0] and own[1]:
        return list(dict.fromkeys([label, *pole_items(own[0] if positive else own[1], label)]))
    texts = [label]
    for term in split_terms(label):
        frames = _ADJECTIVE_FRAMES if _is_adjective(term) else _TOPIC_FRAMES
        texts += [f.format(l=term, n=trait.name.strip() or trait.key) for f in frames]
    description = " ".join(trait.description.split())
    if description:
        texts.append(f"{label}. {description}"[:2000])
    out = [t[0].upper() + t[1:] for t in texts if t]
    return list(dict.fromkeys(out))


def all_pole_texts(trait: TraitSpec) -> tuple[list[str], list[str]]:
    return pole_texts(trait, True), pole_texts(trait, False)


@dataclass
class ZeroShotAxis:
    """A trait's axis from its pole texts alone: r(x) = w . x - offset, score sigmoid(k r)."""

    direction: np.ndarray | None  # unit vector from the negative to the positive pole texts; None if equal
    w: np.ndarray
    offset: float
    k: float
    n_texts: int  # pole texts of both poles together


def zero_shot_axis(positive: np.ndarray, negative: np.ndarray) -> ZeroShotAxis:
    """The prototype axis of the pole texts' embeddings, calibrated on the pole texts themselves.

    The axis is the difference of the two poles' mean embeddings, scaled so that r = +1 at the positive
    mean and -1 at the negative one (the midpoint is 0.5), exactly as a trait trained on the pole texts
    as samples with shrinkage 1. `k` is that trait's calibration: the same class-balanced Platt fit
    (with Platt's target smoothing) on the pole texts, in-sample as for a pole with one sample. Real texts
    are less extreme than their trait's definitions, so they land nearer 0.5: a zero-shot score says
    "as clearly X as the definition" near 0 or 1, and stays modest otherwise.
    """
    P = np.asarray(positive, dtype=np.float64)
    N = np.asarray(negative, dtype=np.float64)
    p_pos, p_neg = P.mean(axis=0), N.mean(axis=0)
    delta = p_pos - p_neg
    norm = float(np.sqrt(delta @ delta))
    dim = delta.shape[0]
    if norm < 1e-9:
        return ZeroShotAxis(None, np.zeros(dim), 0.0, K_MIN, len(P) + len(N))  # scores 0.5 everywhere
    w = delta * (2.0 / (norm * norm))
    offset = float(0.5 * (p_pos + p_neg) @ w)
    X = np.concatenate([P, N])
    q = np.concatenate([np.ones(len(P)), np.zeros(len(N))])
    k = fit_calibration(raw_scores(X, w, offset), q)
    return ZeroShotAxis(delta / norm, w, offset, k, len(P) + len(N))
