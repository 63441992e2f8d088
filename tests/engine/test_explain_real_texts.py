"""Word explanations a reader can trust, on real reviews with the default embedder.

A review's words as the reader sees them (punctuation attached: "useless.", "junk,") are explained,
and each word's sign must be the sign of what scoring shows when that word is removed: the text's score minus
the score of the text without it, each scored on its own. The int8 embedder quantises activations per batch,
so explaining in one batch flipped about one word in eleven on these reviews.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.contract import DEFAULT_EMBEDDER
from core.demo import read_demo_model
from core.embedders import get_embedder
from core.engine import Sample, Scorer, TraitSpec
from core.engine.training import train

pytestmark = pytest.mark.slow

SENTIMENT = TraitSpec(key="sentiment", name="Sentiment", positive_label="positive", negative_label="negative")


@pytest.fixture(scope="module")
def reviews() -> tuple[Scorer, list[str]]:
    """The product-review demo's Sentiment samples trained with the default embedder, and its Detail texts
    (reviews of the same shop, not trained on) to explain."""
    demo = read_demo_model("product_reviews").samples
    train_rows = [r for r in demo if r["trait"] == "Sentiment"]
    samples = [Sample(trait="sentiment", text=r["text"], quality=float(r["quality"]), id=i)
               for i, r in enumerate(train_rows)]  # fmt: skip
    embedder = get_embedder(DEFAULT_EMBEDDER)
    result = train([SENTIMENT], samples, embedder=embedder, effort="low")
    trained = {r["text"] for r in train_rows}
    unseen = [r["text"] for r in demo if r["text"] not in trained]
    return Scorer.from_snapshot(result.snapshot, embedder), unseen[:12]


def _without(text: str, i: int) -> str:
    words = text.split()
    return " ".join(words[:i] + words[i + 1 :])


def test_each_word_s_sign_is_the_score_s_change_without_it(reviews: tuple[Scorer, list[str]]) -> None:
    scorer, texts = reviews
    checked = 0
    for text in texts:
        effects = scorer.explain(text)["sentiment"]
        assert [e.word for e in effects] == text.split()  # words as the reader sees them, punctuated
        base = float(scorer.score(text)[0, 0])
        for i, effect in enumerate(effects):
            change = base - float(scorer.score(_without(text, i))[0, 0])
            assert np.sign(effect.contribution) == np.sign(change), (text, effect, change)
            assert effect.contribution == pytest.approx(change, abs=1e-6)
            assert np.sign(effect.axis) == np.sign(change), (text, effect, change)
            checked += 1
    assert checked > 100
    assert any(w.endswith((".", ",", "!")) for t in texts for w in t.split())  # punctuated words were in it
