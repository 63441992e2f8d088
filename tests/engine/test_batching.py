"""BatchingEmbedder: callers get exactly their own rows, errors reach the right caller, clean close."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from core.embedders import BatcherClosedError, BatchingEmbedder
from core.embedders.base import Embedder
from core.engine import Scorer, TrainingResult
from harness.waiting import wait_until


class Recording:
    """Wraps an embedder, records each call's texts, can hold calls at a gate and fail on a marker."""

    def __init__(self, inner: Embedder, fail_marker: str | None = None) -> None:
        self.inner = inner
        self.id = inner.id
        self.dim = inner.dim
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.fail_marker = fail_marker

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.entered.set()
        self.gate.wait(30)  # bounded, so a failing test cannot hang the run
        bad = [t for t in texts if self.fail_marker and self.fail_marker in t]
        if bad:
            raise ValueError(f"cannot encode {bad[0]!r}")
        return self.inner.encode(texts)


def wait_for(cond: Callable[[], bool], what: str) -> None:
    """Poll for a state another thread reaches (a safety limit only, not a timing assertion)."""
    wait_until(cond, 30, what, interval=0.001)


def queued(batcher: BatchingEmbedder) -> int:
    with batcher._cond:
        return len(batcher._pending)


def test_keeps_id_dim_and_empty_input(hashing: Embedder) -> None:
    with BatchingEmbedder(hashing) as b:
        assert (b.id, b.dim) == (hashing.id, hashing.dim)
        empty = b.encode([])
        assert empty.shape == (0, hashing.dim) and empty.dtype == np.float32
        assert b._threads == []  # nothing to encode: no worker started


def test_many_threads_get_their_own_rows(hashing: Embedder) -> None:
    texts = [f"text number {i} about {'cats' if i % 3 else 'the weather'} and {i * 7}" for i in range(400)]
    expected = hashing.encode(texts)
    rec = Recording(hashing)
    with BatchingEmbedder(rec, max_batch=32, max_wait_ms=2) as b:

        def call(i: int) -> tuple[int, np.ndarray]:
            n = 1 + i % 3  # calls of 1-3 texts, so rows must be sliced back correctly
            idx = [(i + k * 131) % len(texts) for k in range(n)]
            return i, b.encode([texts[j] for j in idx])

        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(call, range(600)))
    for i, got in results:
        n = 1 + i % 3
        idx = [(i + k * 131) % len(texts) for k in range(n)]
        np.testing.assert_allclose(got, expected[idx], rtol=0, atol=1e-6)
    assert sum(len(c) for c in rec.calls) == sum(1 + i % 3 for i in range(600))
    assert all(len(c) <= 32 for c in rec.calls)


def test_pending_calls_are_merged_up_to_max_batch(hashing: Embedder) -> None:
    rec = Recording(hashing)
    rec.gate.clear()
    with BatchingEmbedder(rec, max_batch=8, max_wait_ms=0) as b, ThreadPoolExecutor(12) as pool:
        first = pool.submit(b.encode, ["first"])
        rec.entered.wait(30)  # the worker is inside the first call; queue eleven more behind it
        rest = [pool.submit(b.encode, [f"caller {i}"]) for i in range(11)]
        wait_for(lambda: queued(b) == 11, "eleven queued calls")
        rec.gate.set()
        vectors = [first.result(30)] + [f.result(30) for f in rest]
    assert [len(c) for c in rec.calls] == [1, 8, 3]
    assert sorted(t for c in rec.calls[1:] for t in c) == sorted(f"caller {i}" for i in range(11))
    np.testing.assert_allclose(
        np.vstack(vectors[1:]), hashing.encode([f"caller {i}" for i in range(11)]), atol=1e-6
    )


def test_the_oldest_call_goes_first_with_the_calls_nearest_to_it_in_length(hashing: Embedder) -> None:
    rec = Recording(hashing)
    rec.gate.clear()
    lengths = [50, 5, 48, 200, 52, 10, 49]  # queued in this order behind the first call
    texts = ["x" * n for n in lengths]
    with BatchingEmbedder(rec, max_batch=4, max_wait_ms=0) as b, ThreadPoolExecutor(8) as pool:
        first = pool.submit(b.encode, ["first"])
        rec.entered.wait(30)
        futures = []
        for i, text in enumerate(texts):
            futures.append(pool.submit(b.encode, [text]))

            def in_order(n: int = i + 1) -> bool:
                return queued(b) == n

            wait_for(in_order, "calls queued in order")
        rec.gate.set()
        assert first.result(30).shape == (1, hashing.dim)
        for text, fut in zip(texts, futures, strict=True):
            np.testing.assert_allclose(fut.result(30), hashing.encode([text]), atol=1e-6)
    assert [sorted(len(t) for t in c) for c in rec.calls[1:]] == [[48, 49, 50, 52], [5, 10, 200]]


def test_workers_encode_batches_at_the_same_time(hashing: Embedder) -> None:
    rec = Recording(hashing)
    rec.gate.clear()
    with BatchingEmbedder(rec, max_batch=1, max_wait_ms=0, workers=2) as b, ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(b.encode, [f"call {i}"]) for i in range(3)]
        # Two calls are inside the embedder at once while the gate holds both; the third waits its turn.
        wait_for(lambda: len(rec.calls) == 2 and queued(b) == 1, "two workers inside the embedder")
        rec.gate.set()
        for i, fut in enumerate(futures):
            np.testing.assert_allclose(fut.result(30), hashing.encode([f"call {i}"]), atol=1e-6)
    assert sorted(t for c in rec.calls for t in c) == [f"call {i}" for i in range(3)]
    assert len(rec.calls) == 3  # one call of the embedder per batch of one
    with pytest.raises(ValueError, match="workers"):
        BatchingEmbedder(hashing, workers=0)


def test_call_larger_than_max_batch_is_not_split(hashing: Embedder) -> None:
    rec = Recording(hashing)
    texts = [f"row {i}" for i in range(50)]
    with BatchingEmbedder(rec, max_batch=8) as b:
        got = b.encode(texts)
    assert rec.calls == [texts]
    np.testing.assert_allclose(got, hashing.encode(texts), atol=1e-6)


def test_error_goes_only_to_the_caller_whose_text_failed(hashing: Embedder) -> None:
    rec = Recording(hashing, fail_marker="BOOM")
    rec.gate.clear()
    with BatchingEmbedder(rec, max_batch=32, max_wait_ms=0) as b, ThreadPoolExecutor(8) as pool:
        first = pool.submit(b.encode, ["warm"])
        rec.entered.wait(30)
        texts = ["good one", "BOOM here", "good two", "good three", "also BOOM"]
        futures = [pool.submit(b.encode, [t]) for t in texts]
        wait_for(lambda: queued(b) == len(texts), "five queued calls")
        rec.gate.set()
        first.result(30)
        for text, fut in zip(texts, futures, strict=True):
            if "BOOM" in text:
                with pytest.raises(ValueError, match=text):
                    fut.result(30)
            else:
                np.testing.assert_allclose(fut.result(30), hashing.encode([text]), atol=1e-6)
        # The five were tried together first, then one by one; the worker keeps serving afterwards.
        assert sorted(rec.calls[1]) == sorted(texts)
        np.testing.assert_allclose(b.encode(["after"]), hashing.encode(["after"]), atol=1e-6)


def test_wrong_shape_from_the_embedder_is_an_error(hashing: Embedder) -> None:
    class Short:
        id, dim = hashing.id, hashing.dim

        def encode(self, texts: Sequence[str]) -> np.ndarray:
            return hashing.encode(list(texts)[:-1])

    with BatchingEmbedder(Short()) as b, pytest.raises(ValueError, match="shape"):
        b.encode(["a", "b"])


def test_close_drains_queued_calls_then_refuses_new_ones(hashing: Embedder) -> None:
    rec = Recording(hashing)
    rec.gate.clear()
    b = BatchingEmbedder(rec, max_batch=4, max_wait_ms=0)
    with ThreadPoolExecutor(5) as pool:  # one caller at the gate, three queued, one closing
        first = pool.submit(b.encode, ["first"])
        rec.entered.wait(30)
        queued_calls = [pool.submit(b.encode, [f"q{i}"]) for i in range(3)]
        wait_for(lambda: queued(b) == 3, "three queued calls")
        closer = pool.submit(b.close)
        wait_for(lambda: b._closed, "close to start")
        with pytest.raises(BatcherClosedError):
            b.encode(["too late"])
        rec.gate.set()
        closer.result(30)
        assert first.result(30).shape == (1, hashing.dim)
        for i, fut in enumerate(queued_calls):
            np.testing.assert_allclose(fut.result(30), hashing.encode([f"q{i}"]), atol=1e-6)
    assert b._threads and not any(t.is_alive() for t in b._threads)
    b.close()  # idempotent


def test_scorer_through_the_batcher_scores_like_plain(hashing: Embedder, trained: TrainingResult) -> None:
    plain = Scorer.from_snapshot(trained.snapshot, hashing)
    texts = [f"the hotel was {w} and the staff {v}" for w in ("great", "awful") for v in ("kind", "rude")]
    with BatchingEmbedder(hashing) as b:
        batched = Scorer.from_snapshot(trained.snapshot, b)
        with ThreadPoolExecutor(8) as pool:
            rows = list(pool.map(lambda t: batched.score([t])[0], texts * 10))
    np.testing.assert_allclose(np.vstack(rows), np.vstack([plain.score(texts)] * 10), atol=1e-6)
