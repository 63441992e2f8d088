"""Scoring from a snapshot: shapes, chunking and aggregation, explanations, bad input."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from core.embedders.base import Embedder
from core.engine import (
    MAX_TEXT_CHARS,
    EmptyTextError,
    EngineError,
    InvalidTextError,
    Scorer,
    TextTooLongError,
    TrainingResult,
)
from core.engine.explain import (
    EVALS_PER_WINDOW,
    FILLER_PROBES,
    FULL_SHADE,
    MAX_WORDS,
    NOISE_FLOOR,
    WINDOW,
    filler_noise,
    shade,
)
from core.engine.scorer import chunk_text


@pytest.fixture(scope="module")
def scorer(trained: TrainingResult, hashing: Embedder) -> Scorer:
    return Scorer.from_snapshot(trained.snapshot, embedder=hashing)


def _words(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = ["the", "a", "hotel", "dinner", "was", "staff", "room", "food", "today", "we", "it", "chair"]
    return [str(w) for w in rng.choice(vocab, size=n)]


def test_score_shape_range_and_dicts(scorer: Scorer) -> None:
    texts = ["the staff were wonderful and kind", "the room was awful and nasty", "a chair"]
    scores = scorer.score(texts)
    assert scores.shape == (3, 1) and scores.dtype == np.float64
    assert np.all((scores >= 0) & (scores <= 1))
    assert scores[0, 0] > 0.5 > scores[1, 0]
    assert scorer.score_dicts(texts) == [{"sentiment": float(s)} for s in scores[:, 0]]
    assert scorer.traits[0].key == "sentiment" and scorer.traits[0].positive_label == "positive"
    assert scorer.embedder_id == "hashing-v1-512"


def test_single_string_and_empty_batch(scorer: Scorer) -> None:
    one = scorer.score("the staff were wonderful")
    assert one.shape == (1, 1)
    assert scorer.score([]).shape == (0, 1)


def test_a_text_scores_bit_identically_alone_and_in_any_batch(scorer: Scorer) -> None:
    texts = ["the staff were wonderful", "our dinner was dreadful", "a plain sentence about a chair"]
    together = scorer.score(texts)
    for i, text in enumerate(texts):
        assert scorer.score([text])[0, 0] == together[i, 0]
    assert np.array_equal(scorer.score(texts[::-1])[::-1], together)


def test_texts_are_scored_stripped(scorer: Scorer) -> None:
    padded = scorer.score(["  the staff were wonderful \n"])[0, 0]
    assert padded == scorer.score(["the staff were wonderful"])[0, 0]


def test_chunking_splits_long_texts_into_200_word_chunks() -> None:
    words = _words(450)
    chunks = chunk_text(" ".join(words))
    assert [len(c.split()) for c in chunks] == [200, 200, 50]
    assert " ".join(chunks).split() == words
    short = "  exactly   as written  "
    assert chunk_text(short) == [short]  # up to 200 words a text is embedded unchanged
    assert chunk_text(" ".join(_words(200))) == [" ".join(_words(200))]


@pytest.mark.parametrize("aggregation", ["mean", "max", "min"])
def test_long_texts_combine_chunk_scores_by_the_trait_aggregation(
    trained: TrainingResult, hashing: Embedder, aggregation: str
) -> None:
    snapshot = copy.deepcopy(trained.snapshot)
    snapshot["traits"][0]["aggregation"] = aggregation
    scorer = Scorer.from_snapshot(snapshot, embedder=hashing)
    # Chunks of clearly different tone, so mean, max and min differ.
    text = " ".join(["wonderful lovely kind"] * 67 + ["awful rude nasty"] * 67 + ["the room"] * 30)
    chunks = chunk_text(text)
    assert len(chunks) == 3
    per_chunk = scorer.score(chunks)[:, 0]
    expected = {"mean": per_chunk.mean(), "max": per_chunk.max(), "min": per_chunk.min()}[aggregation]
    assert scorer.score([text])[0, 0] == pytest.approx(expected, abs=1e-15)
    assert per_chunk.max() - per_chunk.min() > 0.2


def test_long_text_chunks_are_embedded_in_the_same_call_as_other_texts(
    trained: TrainingResult, counting: Any
) -> None:
    scorer = Scorer.from_snapshot(trained.snapshot, embedder=counting)
    scorer.score(["short one", " ".join(_words(450))])
    assert len(counting.calls) == 1 and len(counting.calls[0]) == 4


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        ("", EmptyTextError, "text 1 is empty"),
        ("   \n\t ", EmptyTextError, "empty"),
        ("x" * (MAX_TEXT_CHARS + 1), TextTooLongError, "20,000"),
        (None, InvalidTextError, "string"),
        (42, InvalidTextError, "int"),
    ],
)
def test_bad_texts_raise_clear_errors(scorer: Scorer, text: object, error: type, needle: str) -> None:
    with pytest.raises(error, match=needle):
        scorer.score(["fine text", text])  # the bad text under test


def test_text_of_exactly_the_limit_is_accepted(scorer: Scorer) -> None:
    assert scorer.score(["a" * MAX_TEXT_CHARS]).shape == (1, 1)


# -- explanations -------------------------------------------------------------------------------


def test_explain_signs_follow_the_poles(scorer: Scorer) -> None:
    text = "the hotel was wonderful but the staff were rude"
    explanation = scorer.explain(text)
    effects = explanation["sentiment"]
    assert [e.word for e in effects] == text.split()
    contribution = {e.word: e.contribution for e in effects}
    assert contribution["wonderful"] > 0.02
    assert contribution["rude"] < -0.02
    assert contribution["wonderful"] == max(contribution.values())
    assert all(np.sign(e.axis) == np.sign(e.contribution) for e in effects)


def _axis(scorer: Scorer, text: str) -> float:
    return float(scorer.axis_vectors(scorer.embed([text]))[0, 0])


def test_explain_words_sum_to_the_text_s_move_from_the_midpoint(scorer: Scorer) -> None:
    text = "our dinner was   lovely and kind"
    effects = scorer.explain(text)["sentiment"]
    assert [e.word for e in effects] == text.split()
    # Owen values are efficient: the words share exactly the text's axis position and its score's distance
    # from 0.5, the empty text's (the text scored as written, spaces and all).
    assert sum(e.axis for e in effects) == pytest.approx(_axis(scorer, text), abs=1e-9)
    assert sum(e.contribution for e in effects) == pytest.approx(scorer.score([text])[0, 0] - 0.5, abs=1e-9)
    # The axis is the score's logit over the calibration slope: the score is sigmoid(k * axis position).
    assert scorer.calibrate(np.array([[_axis(scorer, text)]]))[0, 0] == scorer.score([text])[0, 0]


def test_strength_is_the_axis_change_in_units_of_the_trait_s_filler_noise(scorer: Scorer) -> None:
    noise = filler_noise(scorer)
    assert noise.shape == (1,) and noise[0] > 0
    # The noise is what removing a function word from a neutral sentence does to the axis.
    probe = FILLER_PROBES[0]  # "The meeting was moved to the second floor on Tuesday."
    change = _axis(scorer, probe) - _axis(scorer, probe.replace(" the second", " second"))
    assert change != 0 and abs(change) < 5 * noise[0]
    for effect in scorer.explain("the hotel was wonderful but the staff were rude")["sentiment"]:
        assert effect.strength == pytest.approx(effect.axis / noise[0], rel=1e-12)
        assert effect.shade == shade(effect.strength)


def test_shade_is_zero_below_the_noise_floor_and_full_from_full_shade() -> None:
    assert shade(0.0) == 0.0
    assert shade(NOISE_FLOOR * 0.99) == 0.0 and shade(-NOISE_FLOOR * 0.99) == 0.0
    assert shade(NOISE_FLOOR) == pytest.approx(NOISE_FLOOR / FULL_SHADE)
    assert shade(-0.6 * FULL_SHADE) == pytest.approx(-0.6)
    assert shade(FULL_SHADE) == 1.0 and shade(5 * FULL_SHADE) == 1.0 and shade(-5 * FULL_SHADE) == -1.0
    assert 0 < NOISE_FLOOR < FULL_SHADE


def test_explain_embeds_each_variant_as_a_score_embeds_a_text(trained: TrainingResult, counting: Any) -> None:
    scorer = Scorer.from_snapshot(trained.snapshot, embedder=counting)
    filler_noise(scorer)  # the filler probes are embedded once per embedder and process
    counting.calls.clear()
    scorer.explain("the staff were wonderful and kind today")
    # One text a call, never a batch; the empty text is the midpoint, never embedded; at most the budget.
    assert counting.calls and all(len(call) == 1 for call in counting.calls)
    assert len(counting.calls) <= 1 + EVALS_PER_WINDOW
    assert all(call[0].strip() for call in counting.calls)


def test_explain_limits_to_max_words_and_handles_one_word(scorer: Scorer) -> None:
    text = " ".join(["wonderful"] * 10 + ["awful"] * 10)
    effects = scorer.explain(text, max_words=5)["sentiment"]
    assert [e.word for e in effects] == ["wonderful"] * 5
    single = scorer.explain("wonderful")["sentiment"]
    assert [e.word for e in single] == ["wonderful"]
    # Without its only word the text is empty: the midpoint, score 0.5 and axis 0.
    assert single[0].contribution == pytest.approx(scorer.score(["wonderful"])[0, 0] - 0.5)
    assert single[0].axis == pytest.approx(_axis(scorer, "wonderful"))
    with pytest.raises(EngineError, match="max_words"):
        scorer.explain(text, max_words=0)
    with pytest.raises(EmptyTextError):
        scorer.explain("  ")


def test_explain_long_text_explains_each_word_in_its_window(
    scorer: Scorer, trained: TrainingResult, counting: Any
) -> None:
    words = _words(250, seed=3)
    words[1] = "wonderful"
    words[40] = "wonderful"
    text = " ".join(words)  # 250 words: longer than a window
    effects = scorer.explain(text)["sentiment"]
    assert [e.word for e in effects] == words[:MAX_WORDS]
    # Each window (words 0-31, 32-63) is its own game: its words sum to the window's axis position.
    for start in (0, WINDOW):
        window = " ".join(words[start : start + WINDOW])
        total = sum(e.axis for e in effects[start : start + WINDOW])
        assert total == pytest.approx(_axis(scorer, window), abs=1e-9)
    assert effects[1].axis > 0 and effects[40].axis > 0
    # The cost is the words explained, not the text: within the budget, never more than a window a text.
    counted = Scorer.from_snapshot(trained.snapshot, embedder=counting)
    filler_noise(counted)
    counting.calls.clear()
    counted.explain(" ".join(_words(3_000, seed=4)))
    texts = [t for call in counting.calls for t in call]
    assert len(texts) <= 2 * EVALS_PER_WINDOW and max(len(t.split()) for t in texts) == WINDOW
