"""A text is cut to its embedder's window before it is tokenized: what an encode holds is bounded by the
window, not by what a user stored, and a long text keeps the tokens (so the vector) its window always had."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from core.contract import MAX_TEXT_CHARS
from core.embedders import CachedEmbedder, HashingEmbedder, MemoryStore, MiniLMEmbedder, cache_key
from core.embedders.base import CUT_CHARS_PER_TOKEN, cut_for_window
from core.embedders.e5 import E5_ID
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.int8_build import PER_TOKEN
from core.embedders.quantized import gate_texts

pytestmark = pytest.mark.slow  # MiniLM's model, e5's and mpnet's tokenizers


@pytest.fixture(scope="module")
def long_text() -> str:
    """A realistic text at the length limit: the demo models' texts run together."""
    return " ".join(gate_texts())[:MAX_TEXT_CHARS]


def test_a_text_within_the_bound_is_untouched_and_a_longer_one_cut() -> None:
    window = 10
    text = "x" * (window * CUT_CHARS_PER_TOKEN)
    assert cut_for_window(text, window) is text
    assert cut_for_window(text + "y", window) == text


class Spy:
    """MiniLM's real tokenizer, recording the longest text it was given."""

    def __init__(self, tokenizer: Any) -> None:  # Any: a tokenizers.Tokenizer (no py.typed marker)
        self.tokenizer = tokenizer
        self.longest = 0

    def encode_batch(self, texts: Sequence[str]) -> Any:
        self.longest = max(self.longest, *map(len, texts))
        return self.tokenizer.encode_batch(texts)


def test_minilm_never_tokenizes_more_than_its_window_holds(long_text: str) -> None:
    minilm = MiniLMEmbedder().load()
    full = minilm._tokenizer.encode(long_text).ids  # what the tokenizer made of the whole text: 256 tokens
    spy = minilm._tokenizer = Spy(minilm._tokenizer)
    cut = long_text[: 256 * CUT_CHARS_PER_TOKEN]
    a, b = minilm.encode([long_text, cut])
    assert spy.longest == len(cut) < len(long_text)
    assert spy.tokenizer.encode(cut).ids == full  # the same window of tokens: the same vector
    np.testing.assert_array_equal(a, b)


def test_mpnet_and_e5_keep_the_window_a_long_text_always_had(long_text: str) -> None:
    from core.embedders.e5 import MAX_POSITIONS, MODEL_FILE, package_dir
    from core.embedders.e5_tokenizer import E5Tokenizer
    from core.embedders.e5_weights import read_header
    from core.embedders.mpnet_graph import MAX_TOKENS

    e5 = E5Tokenizer(read_header(package_dir() / MODEL_FILE).vocab)
    size = MAX_POSITIONS - 2
    cut = cut_for_window(long_text, MAX_POSITIONS)
    assert len(cut) < len(long_text)
    [whole], [kept] = e5.content_ids([long_text]), e5.content_ids([cut])
    assert len(kept) > size and kept[:size] == whole[:size]
    try:
        from core.embedders.mpnet_quantized import _tokenizer

        mpnet = _tokenizer()
    except Exception as exc:  # noqa: BLE001 - the mpnet extra is optional
        pytest.skip(f"mpnet-base's weights are not installed here: {exc}")
    cut = cut_for_window(long_text, MAX_TOKENS)
    assert len(cut) < len(long_text) and mpnet.encode(cut).ids == mpnet.encode(long_text).ids


@pytest.mark.parametrize("embedder_id", [E5_QINT8_ID, E5_ID])
def test_e5_vectors_cached_with_every_window_are_never_read(embedder_id: str) -> None:
    # e5-small's long texts were embedded as the mean of all their windows; now as their first window. A
    # vector cached under the keys of before must never come back beside the new ones.
    text = "cached before the cut"
    digest = hashlib.sha256(text.encode()).hexdigest()
    old = f"{embedder_id}#{PER_TOKEN}:{digest}" if embedder_id == E5_QINT8_ID else f"{embedder_id}:{digest}"
    store = MemoryStore()
    store.put_many({old: np.full(64, 0.125, np.float32)})
    stand_in = HashingEmbedder(dim=64)  # the cache only sees an id and vectors
    stand_in.id = embedder_id
    np.testing.assert_array_equal(CachedEmbedder(stand_in, store).encode([text]), stand_in.encode([text]))
    assert cache_key(embedder_id, text) != old
