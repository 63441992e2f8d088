"""Fixtures for the engine tests: the hashing embedder and a small synthetic sentiment corpus
(tests/support/corpus.py)."""

from __future__ import annotations

import pytest

from core.embedders import get_embedder
from core.embedders.base import Embedder
from core.engine import TrainingResult, train
from tests.support.corpus import SENTIMENT, Corpus, CountingEmbedder, sentiment_samples


@pytest.fixture(scope="session")
def corpus() -> type[Corpus]:
    return Corpus


@pytest.fixture(scope="session")
def hashing() -> Embedder:
    return get_embedder("hashing")


@pytest.fixture
def counting(hashing: Embedder) -> CountingEmbedder:
    return CountingEmbedder(hashing)


@pytest.fixture(scope="session")
def trained(hashing: Embedder) -> TrainingResult:
    """One sentiment trait trained at effort low (shared: training is deterministic)."""
    return train([SENTIMENT], sentiment_samples(), embedder=hashing, effort="low")
