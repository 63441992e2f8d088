"""The rule training's `auto` keeps a body by: the best out-of-fold ROC-AUC, a near tie to the cheaper body,
and no English-only body for a model whose samples are mostly in another language."""

from __future__ import annotations

from typing import Any

import pytest

from core.embedders import get_embedder
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.engine import train
from core.engine.body_choice import TIE, Candidate, choose, eligible, model_roc_auc, train_on_best_body

BODIES = [E5_QINT8_ID, MPNET_QINT8_ID]  # cheapest first


def pick(*aucs: float | None) -> str:
    return choose([Candidate(b, a) for b, a in zip(BODIES, aucs, strict=True)]).embedder_id


def test_the_best_out_of_fold_figure_wins() -> None:
    assert pick(0.87, 0.91) == MPNET_QINT8_ID
    assert pick(0.93, 0.91) == E5_QINT8_ID


def test_a_lead_within_the_tie_keeps_the_cheaper_body() -> None:
    assert pick(0.900, 0.900 + TIE - 0.001) == E5_QINT8_ID
    assert pick(0.900, 0.900 + TIE + 0.001) == MPNET_QINT8_ID


def test_without_folds_the_cheapest_body_is_kept() -> None:
    assert pick(None, None) == E5_QINT8_ID
    assert pick(None, 0.8) == MPNET_QINT8_ID  # a figure beats no figure
    with pytest.raises(ValueError):
        choose([])


def test_an_english_only_body_is_left_out_for_mostly_other_languages() -> None:
    assert eligible(BODIES, ["en", "en", "es", None]) == (BODIES, [])
    assert eligible(BODIES, ["es", "es", "en", None]) == ([E5_QINT8_ID], [MPNET_QINT8_ID])
    assert eligible(BODIES, [None, None]) == (BODIES, [])  # detection could not tell: every body stays
    assert eligible(["hashing-v1-512", MPNET_QINT8_ID], ["zh"]) == (["hashing-v1-512"], [MPNET_QINT8_ID])


def test_training_keeps_the_body_with_the_better_out_of_fold_figure(corpus: Any) -> None:
    # Two real bodies of different quality: the hashing embedder at 512 dimensions and at 8 (its buckets
    # collide so much that the poles blur). Listed with the weak one first, as if it were the cheaper.
    weak, strong = get_embedder("hashing-v1-8"), get_embedder("hashing-v1-512")
    samples = corpus.sentiment_samples(10, 10)
    trait = [corpus.SENTIMENT]
    choice = train_on_best_body(trait, samples, [weak, strong], ["en"] * len(samples), effort="low")
    alone = {b.id: model_roc_auc(train(trait, samples, embedder=b, effort="low")) for b in (weak, strong)}
    # Each candidate's figure is the one training on that body alone reports: the same folds.
    assert {c.embedder_id: c.roc_auc for c in choice.candidates} == alone
    strong_auc, weak_auc = alone[strong.id], alone[weak.id]
    assert strong_auc is not None and weak_auc is not None
    assert strong_auc > weak_auc + TIE
    assert choice.chosen == strong.id
    assert choice.result.snapshot["embedder"]["id"] == strong.id
    assert choice.describe().startswith(f"trained on hashing: out-of-fold {strong_auc:.2f} against ")
    assert choice.as_json()["candidates"] == [
        {"embedder": weak.id, "roc_auc": alone[weak.id]},
        {"embedder": strong.id, "roc_auc": alone[strong.id]},
    ]


def test_the_bodies_on_offer_are_e5_first_and_mpnet_only_with_its_extra() -> None:
    from core.embedders.mpnet_source import installed
    from core.embedders.registry import available_bodies

    assert available_bodies() == [E5_QINT8_ID, MPNET_QINT8_ID] if installed() else [E5_QINT8_ID]
