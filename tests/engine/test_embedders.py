"""Hashing embedder, embedding cache and registry (no model files needed)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from core.embedders import (
    CachedEmbedder,
    Embedder,
    HashingEmbedder,
    MemoryStore,
    MiniLMEmbedder,
    SqliteStore,
    cache_key,
    get_embedder,
)
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.quantized import QINT8V2_ID
from core.engine.errors import EmbedderUnavailableError, EngineError
from tests.support.processes import FreshPython

TEXTS = [
    "The service was quick and the staff were lovely.",
    "The staff were lovely and the service was quick!",
    "Quarterly tax filings are due at the end of March.",
    "Could you please take a look at my edit when you have a moment?",
]


class CountingHashingEmbedder(HashingEmbedder):
    """A real HashingEmbedder that records what it was asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().encode(texts)

    @property
    def encoded(self) -> list[str]:
        return [t for call in self.calls for t in call]


# --- hashing -------------------------------------------------------------------------------------------


def test_hashing_satisfies_protocol_and_shape() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.id == "hashing-v1-512"
    vecs = emb.encode(TEXTS)
    assert vecs.shape == (len(TEXTS), 512)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert emb.encode([]).shape == (0, 512)


def test_hashing_empty_rows_are_zero_not_nan() -> None:
    vecs = HashingEmbedder().encode(["", "   ", "?!", "words here"])
    assert np.isfinite(vecs).all()
    assert np.linalg.norm(vecs[3]) == pytest.approx(1.0, abs=1e-5)
    assert np.linalg.norm(vecs[0]) == 0.0


def test_hashing_is_deterministic_across_processes(fresh_python: FreshPython) -> None:
    here = HashingEmbedder().encode(TEXTS)
    code = (
        "import json, sys\n"
        "from core.embedders import HashingEmbedder\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps(HashingEmbedder().encode(texts).tolist()))\n"
    )
    # A different PYTHONHASHSEED proves we do not rely on Python's salted str hash.
    env = {"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}
    done = fresh_python(code, env=env, input=json.dumps(TEXTS))
    there = np.asarray(json.loads(done.stdout), dtype=np.float32)
    np.testing.assert_array_equal(here, there)


def test_hashing_similar_texts_are_closer_than_unrelated() -> None:
    v = HashingEmbedder().encode(TEXTS)
    assert v[0] @ v[1] > 0.5
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3
    assert v[0] @ v[1] > v[0] @ v[3]


def test_hashing_char_ngrams_catch_inflections() -> None:
    v = HashingEmbedder().encode(["unbelievably wonderful", "unbelievable wonder", "tax return"])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_hashing_parameters_change_the_id() -> None:
    ids = {
        HashingEmbedder().id,
        HashingEmbedder(dim=256).id,
        HashingEmbedder(word_ngrams=(1, 1)).id,
        HashingEmbedder(char_ngrams=(2, 4)).id,
        HashingEmbedder(char_weight=0.3).id,
    }
    assert len(ids) == 5
    with pytest.raises(ValueError):
        HashingEmbedder(dim=2)


# --- registry ------------------------------------------------------------------------------------------


def test_registry_returns_singletons_by_name_and_id() -> None:
    h = get_embedder("hashing")
    assert get_embedder("hashing") is h
    assert get_embedder(h.id) is h
    m = get_embedder("minilm")
    assert isinstance(m, MiniLMEmbedder)
    assert get_embedder(m.id) is m
    assert m.id == "minilm-l6-v2-int8@8199be6f"
    assert m.dim == 384
    short = get_embedder("minilm-l6-v2-int8@8199be6f-t128")
    assert isinstance(short, MiniLMEmbedder) and short.max_tokens == 128 and short is not m


def test_registry_rebuilds_non_default_hashing_ids() -> None:
    custom = HashingEmbedder(dim=128, word_ngrams=(1, 1), char_ngrams=(2, 4), char_weight=0.3)
    rebuilt = get_embedder(custom.id)
    assert rebuilt.id == custom.id
    np.testing.assert_array_equal(rebuilt.encode(TEXTS), custom.encode(TEXTS))


@pytest.mark.parametrize(
    "name", ["nope", "hashing-v2-512", "minilm-l6-v2-int8@00000000", "minilm-l6-v2-int8@8199be6f-t999", ""]
)
def test_registry_unknown_names_raise_clearly(name: str) -> None:
    with pytest.raises(EmbedderUnavailableError) as info:
        get_embedder(name)
    assert isinstance(info.value, EngineError)
    assert info.value.code == "embedder_unavailable"
    message = str(info.value)
    assert repr(name) in message and "hashing" in message and "minilm" in message


# --- cache ---------------------------------------------------------------------------------------------


def test_cache_keeps_id_and_dim_and_vectors() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner)
    assert (cached.id, cached.dim) == (inner.id, inner.dim)
    assert isinstance(cached, Embedder)
    np.testing.assert_array_equal(cached.encode(TEXTS), inner.encode(TEXTS))
    np.testing.assert_array_equal(cached.encode(TEXTS), inner.encode(TEXTS))


def test_cache_encodes_only_misses_once_in_one_batch() -> None:
    inner = CountingHashingEmbedder()
    cached = CachedEmbedder(inner)
    cached.encode(TEXTS[:2])
    assert inner.calls == [TEXTS[:2]]
    out = cached.encode([TEXTS[0], TEXTS[2], TEXTS[1], TEXTS[3], TEXTS[2]])
    assert inner.calls[1] == [TEXTS[2], TEXTS[3]]  # duplicates of a miss are encoded once
    assert len(inner.calls) == 2
    np.testing.assert_array_equal(out[1], out[4])
    cached.encode(TEXTS)
    assert len(inner.calls) == 2  # all hits: no encode call at all
    assert (cached.misses, cached.hits) == (4, 2 + 1 + len(TEXTS))


def test_cache_key_is_embedder_id_plus_text_sha256() -> None:
    a, b = HashingEmbedder(), HashingEmbedder(dim=256)
    store = MemoryStore()
    CachedEmbedder(a, store).encode(["same text"])
    vec = CachedEmbedder(b, store).encode(["same text"])
    assert vec.shape == (1, 256)  # another embedder never sees the first one's vector
    assert len(store) == 2
    assert cache_key(a.id, "same text").startswith(f"{a.id}:")


@pytest.mark.parametrize("embedder_id", [E5_QINT8_ID, QINT8V2_ID])
def test_int8_vectors_cached_before_per_token_scales_are_never_read(embedder_id: str) -> None:
    # These ids' vectors were computed with one int8 scale per batch (they depended on the batch) and are now
    # computed per token under the same ids: a vector the old computation cached must never come back.
    text = "cached before the change"
    old_key = f"{embedder_id}:{hashlib.sha256(text.encode()).hexdigest()}"
    store = MemoryStore()
    store.put_many({old_key: np.full(64, 0.125, np.float32)})
    stand_in = HashingEmbedder(dim=64)  # the cache only sees an id and vectors
    stand_in.id = embedder_id
    vec = CachedEmbedder(stand_in, store).encode([text])
    np.testing.assert_array_equal(vec, stand_in.encode([text]))
    assert cache_key(embedder_id, text) != old_key and len(store) == 2


def test_memory_store_is_bounded_lru() -> None:
    inner = CountingHashingEmbedder()
    cached = CachedEmbedder(inner, MemoryStore(max_items=2))
    cached.encode(["a a", "b b"])
    cached.encode(["a a"])  # touch: "b b" becomes least recently used
    cached.encode(["c c"])
    assert len(cached.store) == 2
    cached.encode(["a a"])
    assert inner.encoded == ["a a", "b b", "c c"]
    cached.encode(["b b"])
    assert inner.encoded[-1] == "b b"


def test_store_false_reads_hits_but_writes_nothing(tmp_path: Path) -> None:
    inner = CountingHashingEmbedder()
    store = SqliteStore(tmp_path / "emb.sqlite")
    cached = CachedEmbedder(inner, store)
    cached.encode([TEXTS[0]])
    out = cached.encode([TEXTS[0], "secret zero-retention text"], store=False)
    assert inner.calls[-1] == ["secret zero-retention text"]
    assert len(store) == 1
    np.testing.assert_array_equal(out[1], HashingEmbedder().encode(["secret zero-retention text"])[0])
    keys = [k for (k,) in sqlite3.connect(tmp_path / "emb.sqlite").execute("SELECT key FROM embeddings")]
    assert keys == [cache_key(inner.id, TEXTS[0])]
    cached.encode(["secret zero-retention text"], store=False)
    assert inner.calls[-1] == ["secret zero-retention text"]  # still not cached


def test_read_only_view_shares_hits_and_writes_nothing(tmp_path: Path) -> None:
    inner = CountingHashingEmbedder()
    cached = CachedEmbedder(inner, SqliteStore(tmp_path / "emb.sqlite"))
    cached.encode([TEXTS[0]])
    view = cached.read_only()
    assert (view.id, view.dim) == (cached.id, cached.dim)
    view.encode([TEXTS[0], TEXTS[1]])
    view.encode([TEXTS[1]])
    assert inner.calls == [[TEXTS[0]], [TEXTS[1]], [TEXTS[1]]]
    assert len(cached.store) == 1
    assert (view.hits, view.misses) == (1, 2)


def test_sqlite_store_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "emb.sqlite"
    store = SqliteStore(path)
    first = CachedEmbedder(HashingEmbedder(), store)
    expected = first.encode(TEXTS)
    store.close()

    inner = CountingHashingEmbedder()
    second = CachedEmbedder(inner, SqliteStore(path))
    got = second.encode(TEXTS)
    assert inner.calls == []
    assert (second.hits, second.misses) == (len(TEXTS), 0)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_sqlite_store_is_safe_across_threads(tmp_path: Path) -> None:
    cached = CachedEmbedder(HashingEmbedder(), SqliteStore(tmp_path / "emb.sqlite"))
    errors: list[BaseException] = []
    texts = [f"thread text number {i}" for i in range(200)]

    def work(offset: int) -> None:
        try:
            for i in range(0, 200, 10):
                cached.encode(texts[(i + offset) % 200 : (i + offset) % 200 + 10])
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k * 50,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cached.store) == 200
    np.testing.assert_array_equal(cached.encode(texts), HashingEmbedder().encode(texts))
