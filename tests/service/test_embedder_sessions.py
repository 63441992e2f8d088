"""A service with many models on a few embedders: one scoring model per embedder, shared by every model on it,
and each embedder's vectors cached under its own key (two real hashing embedders stand in for two
embedders)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from core.embedders import CachedEmbedder, cache_key
from core.engine import train
from core.engine.types import TraitSpec
from service.domain.embedding import Embedders, ScorerCache

# No database: the process's embedders and scorers alone.
pytestmark = pytest.mark.database_free

TRAIT = TraitSpec("tone", "Tone", "polite", "rude")
EMBEDDERS = ["hashing-v1-512"] * 3 + ["hashing-v1-64"] * 2  # five models' versions on two embedders


def test_many_models_share_one_scoring_model_per_embedder_and_cache_apart(tmp_path: Path) -> None:
    embedders = Embedders("hashing", tmp_path / "vectors.sqlite", scoring_threads=1)
    scorers = ScorerCache(embedders)
    try:
        snapshots = [train([TRAIT], [], embedder=embedders.get(b), effort="low").snapshot for b in EMBEDDERS]
        got = [scorers.get(n, partial(dict, snap), retain=True) for n, snap in enumerate(snapshots, start=1)]
        # Each version scores with the embedder it was trained on ...
        assert [s.embedder.id for s in got] == EMBEDDERS
        # ... through one cached embedder and one batcher per embedder, whatever the number of models on it.
        assert len({id(s.embedder) for s in got}) == len(set(EMBEDDERS))
        assert len({id(s.embedder.embedder) for s in got if isinstance(s.embedder, CachedEmbedder)}) == 2

        text = "Thank you kindly for your patience."
        wide, narrow = got[0].score([text]), got[-1].score([text])
        assert wide.shape == narrow.shape == (1, 1)
        plain = embedders.get()
        assert isinstance(plain, CachedEmbedder)
        stored = plain.store.get_many([cache_key(b, text) for b in set(EMBEDDERS)])
        assert {k.split(":")[0]: v.shape for k, v in stored.items()} == {
            "hashing-v1-512": (512,),
            "hashing-v1-64": (64,),
        }
    finally:
        embedders.close()
