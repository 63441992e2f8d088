"""Zero-shot traits (no samples: the pole-text axis) and the pole-text prior in few-shot training."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from core.embedders.base import Embedder
from core.engine import OnePoleTraitError, Sample, Scorer, TraitSpec, train
from core.engine.pole_text import all_pole_texts, pole_texts

DIM = 48
#: The known direction: the trait lives on the first coordinate.
AXIS = np.eye(DIM)[0]
TRAIT = TraitSpec("tone", "Tone", "alpha", "beta")


class KnownDirectionEmbedder:
    """Texts "pos <i>" / "neg <i>" lie at +-SIGNAL on AXIS plus unit-scale noise in every dimension;
    pole texts of TRAIT (they contain "alpha" or "beta") lie near +-AXIS. Deterministic per text."""

    id = "known-direction-v1"
    dim = DIM
    SIGNAL = 0.12

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
            noise = rng.standard_normal(DIM) / np.sqrt(DIM)
            lower = text.lower()
            if lower.startswith(("pos ", "neg ")):
                v = (self.SIGNAL if lower.startswith("pos") else -self.SIGNAL) * AXIS + noise
            elif "alpha" in lower:
                v = AXIS + 0.3 * noise
            elif "beta" in lower:
                v = -AXIS + 0.3 * noise
            else:
                v = noise
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def known() -> Embedder:
    return KnownDirectionEmbedder()


def _draw(n: int, seed: int) -> list[Sample]:
    return [Sample("tone", f"pos {seed}-{i}", 1.0) for i in range(n)] + [
        Sample("tone", f"neg {seed}-{i}", 0.0) for i in range(n)
    ]


def test_pole_texts_share_frames_and_use_description() -> None:
    spec = TraitSpec("p", "Politeness", "polite, friendly", "rude", description="How a request is phrased.")
    pos, neg = pole_texts(spec, True), pole_texts(spec, False)
    assert "Polite." in pos and "This text is friendly." in pos and "This text is rude." in neg
    about = "How a request is phrased."
    assert any(about in t for t in pos) and any(about in t for t in neg)
    assert all_pole_texts(spec) == (pos, neg)


def test_description_sentences_that_name_a_pole_define_it() -> None:
    spec = TraitSpec(
        "p",
        "Politeness",
        "polite",
        "impolite",
        description="Requests on a wiki. Polite ones say thanks, greet or apologise. "
        "Impolite ones demand things.",
    )
    # The label, then what each pole's own sentence lists, without the label's words.
    assert pole_texts(spec, True) == ["polite", "ones say thanks", "greet", "apologise"]
    assert pole_texts(spec, False) == ["impolite", "ones demand things"]  # "polite" is not "impolite"


def test_a_trait_without_samples_trains_zero_shot_and_scores_along_its_labels(known: Embedder) -> None:
    result = train([TRAIT], [], embedder=known, effort="low")
    metrics = result.metrics["tone"]
    assert metrics["method"] == "zero_shot" and metrics["positive_samples"] == 0
    assert metrics["roc_auc"] is None and result.params["tone"] == {"method": "zero_shot"}
    scorer = Scorer.from_snapshot(result.snapshot, embedder=known)
    test = _draw(200, seed=99)
    scores = scorer.score([s.text for s in test])[:, 0]
    assert np.all((scores > 0.0) & (scores < 1.0))
    assert roc_auc_score([s.quality for s in test], scores) > 0.8
    # The pole texts themselves land clearly on their own side.
    assert scorer.score(["alpha"])[0, 0] > 0.8 and scorer.score(["beta"])[0, 0] < 0.2


def test_zero_shot_and_trained_traits_mix_in_one_model(known: Embedder) -> None:
    other = TraitSpec("other", "Other", "alpha", "beta")
    result = train([TRAIT, other], _draw(6, seed=1), embedder=known, effort="low")
    assert result.metrics["tone"]["method"] == "prior"
    assert result.metrics["other"]["method"] == "zero_shot"
    assert result.metrics["tone"]["label_agreement"] > 0.0


def test_a_trait_with_one_pole_only_is_still_refused(known: Embedder) -> None:
    with pytest.raises(OnePoleTraitError):
        train([TRAIT], [Sample("tone", "pos 1", 1.0)], embedder=known, effort="low")


def test_the_prior_helps_at_4_per_pole_on_a_known_direction(known: Embedder) -> None:
    test = _draw(300, seed=12345)
    y = [s.quality for s in test]
    with_prior: list[float] = []
    without: list[float] = []
    for seed in range(12):
        samples = _draw(4, seed)
        plain = {"tone": {"shrinkage": 0.87, "folds": 4, "repeats": 3}}
        for out, params in ((with_prior, None), (without, plain)):
            result = train([TRAIT], samples, embedder=known, effort="medium", params=params)
            scorer = Scorer.from_snapshot(result.snapshot, embedder=known)
            out.append(roc_auc_score(y, scorer.score([s.text for s in test])[:, 0]))
    gain = np.array(with_prior) - np.array(without)
    assert gain.mean() > 0.03 and (gain > 0).sum() >= 10, (gain, with_prior)


def test_the_prior_fades_with_many_samples(known: Embedder) -> None:
    """At 256 per pole the prior barely moves the axis (its pull falls as 1 / n)."""
    samples = _draw(256, seed=7)
    plain = {"tone": {"shrinkage": 0.87, "folds": 5, "repeats": 1}}
    pulled = {"tone": {**plain["tone"], "prior_strength": 2.0}}
    w_plain = np.array(train([TRAIT], samples, embedder=known, params=plain).snapshot["traits"][0]["w"])
    w_prior = np.array(train([TRAIT], samples, embedder=known, params=pulled).snapshot["traits"][0]["w"])
    cosine = w_plain @ w_prior / np.linalg.norm(w_plain) / np.linalg.norm(w_prior)
    assert 0.99 < cosine < 1.0


def test_reused_params_keep_or_drop_the_prior_as_recorded(known: Embedder) -> None:
    samples = _draw(8, seed=3)
    first = train([TRAIT], samples, embedder=known, effort="low")
    assert first.params["tone"]["prior_strength"] > 0
    again = train([TRAIT], samples, embedder=known, params=first.params)
    assert again.snapshot == first.snapshot and again.param_hash == first.param_hash
    # Zero-shot params of a trait that now has samples: searched afresh, with the prior.
    grown = train([TRAIT], samples, embedder=known, effort="low", params={"tone": {"method": "zero_shot"}})
    assert grown.snapshot == first.snapshot


def _assert_same_to_tolerance(got: object, want: object, where: str = "snapshot") -> None:
    """Equal structure, strings and ints; floats equal to relative 1e-6 (docs/engine.md: training goes
    through BLAS, whose per-CPU kernels sum in other orders, so retraining is exact only on one machine)."""
    if isinstance(want, float):
        assert isinstance(got, float) and got == pytest.approx(want, rel=1e-6, abs=1e-9), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_same_to_tolerance(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_same_to_tolerance(g, w, f"{where}[{i}]")
    else:
        assert got == want, where


def test_a_snapshot_trained_before_the_upgrade_scores_identically_and_retrains_to_tolerance(
    hashing: Embedder,
) -> None:
    """data/snapshot_before_prior.json was written by the engine of commit ec750f1 (before zero-shot traits
    and the prior): its snapshot, params, samples, and the scores that engine gave five texts. Scoring the
    stored snapshot is exact on every machine; retraining reproduces it to BLAS's tolerance."""
    old = json.loads((Path(__file__).parent / "data" / "snapshot_before_prior.json").read_text())
    scores = Scorer.from_snapshot(old["snapshot"], embedder=hashing).score(old["texts"])
    assert scores.tolist() == old["scores"]  # exact floats, not approximately
    # Retraining on the same samples with the version's params (automatic retraining) reproduces it.
    fields = ("key", "name", "positive_label", "negative_label", "description", "aggregation")
    traits = [TraitSpec(**{f: t[f] for f in fields}) for t in old["snapshot"]["traits"]]
    samples = [Sample(trait, text, quality, id) for trait, text, quality, id in old["samples"]]
    again = train(traits, samples, embedder=hashing, params=old["params"])
    _assert_same_to_tolerance(again.snapshot, old["snapshot"])
    assert again.param_hash == old["snapshot"]["param_hash"]
    assert all(m["method"] == "samples" for m in again.metrics.values())
