"""Owen-value explanations: words that say the same thing share the effect, and the shares add up.

Leaving one word out at a time cannot see redundancy: when three words each say "negative", removing any
one changes nothing, so a confidently scored text had no coloured word. A scorer that saturates (any
negative word makes the text negative) shows it plainly; the hashing embedder's trained trait checks the
properties on generated texts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.embedders.base import Embedder
from core.engine import Scorer, TrainingResult, TraitSpec
from core.engine.explain import (
    MAX_WORDS,
    NOISE_FLOOR,
    PHRASE_WORDS,
    WINDOW,
    coloured_units,
    explain,
    filler_noise,
    owen_values,
    partition,
)

SENTIMENT = TraitSpec(key="sentiment", name="Sentiment", positive_label="positive", negative_label="negative")
NEGATIVE = frozenset({"awful", "terrible", "horrible"})
VOCAB = [
    "the",
    "food",
    "was",
    "staff",
    "room",
    "wonderful",
    "lovely",
    "awful",
    "rude",
    "kind",
    "and",
    "today",
]


class SaturatingScorer:
    """A trait whose axis is -2 as soon as any negative word is present (more add nothing), plus 0.01 a
    word: the noise a filler word makes. What a confident real model does to redundant words, exactly."""

    embedder_id = "saturating-test"
    traits: Sequence[TraitSpec] = (SENTIMENT,)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        words = [t.lower().split() for t in texts]
        return np.array([[float(any(w.strip(".,") in NEGATIVE for w in ws)), len(ws)] for ws in words])

    def axis_vectors(self, vectors: np.ndarray) -> np.ndarray:
        return -2.0 * vectors[:, :1] + 0.01 * vectors[:, 1:2]

    def calibrate(self, axis: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-3.0 * axis)))


def test_three_words_saying_negative_each_get_a_real_share() -> None:
    scorer = SaturatingScorer()
    assert filler_noise(scorer)[0] == pytest.approx(0.01)
    effects = explain(scorer, "the food was awful, terrible and horrible")["sentiment"]
    strength = {e.word.strip(","): e.strength for e in effects}
    # Removing any one of them changes nothing (the other two still say it): each still gets a share.
    assert all(strength[w] <= -NOISE_FLOOR for w in NEGATIVE), strength
    assert all(abs(strength[w]) < NOISE_FLOOR for w in ("the", "food", "was", "and")), strength
    assert sum(e.axis for e in effects) == pytest.approx(-2.0 + 0.07)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    budget=st.integers(2, 200),
    seed=st.integers(0, 2**16),
)
def test_owen_values_are_efficient_whatever_the_budget(n: int, budget: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    w, pair = rng.normal(size=(n, 2)), rng.normal(size=(n, n, 2))

    def value(mask: np.ndarray) -> np.ndarray:  # a nonlinear two-output game
        x = mask.astype(float)
        return np.tanh(x @ w + np.einsum("i,ijk,j->k", x, pair, x) / n)

    values = owen_values(value, n, budget)
    full, empty = value(np.ones(n, dtype=bool)), value(np.zeros(n, dtype=bool))
    np.testing.assert_allclose(values.sum(axis=0), full - empty, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(st.floats(-5, 5), min_size=1, max_size=20))
def test_an_additive_game_gives_each_player_its_own_weight(weights: list[float]) -> None:
    w = np.array(weights)
    n = len(w)
    values = owen_values(
        lambda mask: np.array([float(w[mask].sum())]), n, budget=2**n + 2 if n < 12 else 10**6
    )
    np.testing.assert_allclose(values[:, 0], w, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 24), data=st.data())
def test_redundant_players_each_get_a_share_and_others_none(n: int, data: st.DataObject) -> None:
    """An OR game (worth 1 once any of the chosen players is present): each chosen player gets a positive
    share, the others nothing, and the shares sum to 1, wherever the chosen players sit."""
    chosen = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))
    picked = np.zeros(n, dtype=bool)
    picked[list(chosen)] = True
    values = owen_values(lambda mask: np.array([float((mask & picked).any())]), n, budget=10**6)[:, 0]
    assert np.all(values[picked] > 0)
    np.testing.assert_allclose(values[~picked], 0.0, atol=1e-12)
    assert values.sum() == pytest.approx(1.0)


@pytest.fixture(scope="module")
def scorer(trained: TrainingResult, hashing: Embedder) -> Scorer:
    return Scorer.from_snapshot(trained.snapshot, embedder=hashing)


@settings(max_examples=20, deadline=None)
@given(words=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=WINDOW))
def test_a_text_s_words_sum_to_its_move_from_the_midpoint(scorer: Scorer, words: list[str]) -> None:
    text = " ".join(words)
    effects = explain(scorer, text)["sentiment"]
    assert [e.word for e in effects] == words
    axis = float(scorer.axis_vectors(scorer.embed([text]))[0, 0])
    assert sum(e.axis for e in effects) == pytest.approx(axis, abs=1e-9)
    assert sum(e.contribution for e in effects) == pytest.approx(
        float(scorer.score(text)[0, 0]) - 0.5, abs=1e-9
    )


# -- what is coloured: words over the floor, and phrases of the partition over theirs ----------------------


@settings(max_examples=60, deadline=None)
@given(strengths=st.lists(st.floats(-20, 20, allow_nan=False), min_size=1, max_size=MAX_WORDS))
def test_coloured_units_are_words_over_the_floor_and_phrases_that_pass_it_together(
    strengths: list[float],
) -> None:
    units = coloured_units(strengths)
    parts = set(partition(len(strengths)))
    covered = np.zeros(len(strengths), dtype=bool)
    for u in units:
        size = u.end - u.start
        assert not covered[u.start : u.end].any()  # a word is in one unit at most
        covered[u.start : u.end] = True
        assert u.strength == pytest.approx(sum(strengths[u.start : u.end]))  # a part's Owen value
        if size > 1:
            assert (u.start, u.end) in parts and size <= PHRASE_WORDS
            assert all(abs(s) < NOISE_FLOOR and s * u.strength > 0 for s in strengths[u.start : u.end])
        assert u.shade != 0.0
    # Every word over the floor is coloured alone, as before; the rest only as part of a phrase.
    alone = {u.start for u in units if u.end - u.start == 1}
    assert alone == {i for i, s in enumerate(strengths) if abs(s) >= NOISE_FLOOR}
    assert [u.start for u in units] == sorted(u.start for u in units)


@settings(max_examples=40, deadline=None)
@given(
    each=st.lists(st.floats(NOISE_FLOOR / 2, NOISE_FLOOR * 0.99), min_size=2, max_size=WINDOW),
    side=st.sampled_from([1, -1]),
)
def test_a_text_whose_words_each_push_its_way_under_the_floor_has_a_phrase_coloured(
    each: list[float], side: int
) -> None:
    """No word alone passes the floor, yet the text says its side with every word: a phrase says it."""
    units = coloured_units([side * s for s in each])
    assert units and all(u.end - u.start > 1 and np.sign(u.shade) == side for u in units)


class SpreadScorer:
    """A trait whose axis moves 0.025 for each kind word, 0.016 for each other word: 2.5 and 1.6 filler
    effects (a function word moves it 0.01), each under the floor, and a text is confident once it has a
    few: as a real confident text whose politeness is spread over many words."""

    embedder_id = "spread-test"
    traits: Sequence[TraitSpec] = (SENTIMENT,)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        words = [t.lower().split() for t in texts]
        return np.array([[sum(w in ("kind", "lovely") for w in ws), len(ws)] for ws in words], dtype=float)

    def axis_vectors(self, vectors: np.ndarray) -> np.ndarray:
        return 0.009 * vectors[:, :1] + 0.016 * vectors[:, 1:2]

    def calibrate(self, axis: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-40.0 * axis)))


@settings(max_examples=25, deadline=None)
@given(words=st.lists(st.sampled_from(["kind", "lovely", "staff", "today"]), min_size=2, max_size=WINDOW))
def test_a_confident_text_has_a_coloured_unit_on_its_side(words: list[str]) -> None:
    """Whenever the spread scorer scores a text 0.9 or more, something in it is coloured towards the
    positive pole, though no word alone passes the floor (leaving one word out colours nothing); and the
    words still sum to score - 0.5."""
    scorer = SpreadScorer()
    text = " ".join(words)
    effects = explain(scorer, text)["sentiment"]
    score = float(scorer.calibrate(scorer.axis_vectors(scorer.embed([text])))[0, 0])
    assert sum(e.contribution for e in effects) == pytest.approx(score - 0.5, abs=1e-9)
    assert all(abs(e.strength) < NOISE_FLOOR for e in effects)
    if score >= 0.9:
        assert any(u.shade > 0 for u in coloured_units([e.strength for e in effects]))
