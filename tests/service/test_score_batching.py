"""Concurrent score requests over real HTTP: each gets its own scores; misses go through one batcher."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from core.embedders import BatchingEmbedder, CachedEmbedder, cache_key, get_embedder
from core.engine import Scorer
from harness.waiting import wait_until
from tests.support.service import Svc, check, loopback, make_model, train_ready


def test_concurrent_scores_match_the_engine(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.batch")
    train_ready(c, h, "acme.batch")
    snapshot = check(c.get("/v1/models/acme.batch/versions/v1", headers=h), 200)["snapshot"]
    reference = Scorer.from_snapshot(snapshot, get_embedder("hashing"))
    texts = [
        f"request {i}: {'dear sir, kindly review' if i % 2 else 'lol yo dude'} item {i * 13}"
        for i in range(120)
    ]
    expected = reference.score(texts)
    keys = [t.key for t in reference.traits]

    def score(client: httpx.Client, text: str) -> dict[str, float]:
        body = check(client.post("/v1/models/acme.batch/score", json={"content": text}), 200)
        return {s["trait"]: s["score"] for s in body["scores"]}

    scoring = svc.ctx.embedders.for_scoring()  # the retaining one: this model is not under ZDR
    assert isinstance(scoring, CachedEmbedder) and isinstance(scoring.embedder, BatchingEmbedder)
    missed = scoring.misses
    with loopback(svc) as url, httpx.Client(base_url=url, headers=h, timeout=60, trust_env=False) as client:
        with ThreadPoolExecutor(16) as pool:
            cold = list(pool.map(lambda t: score(client, t), texts))
        missed_cold = scoring.misses - missed
        with ThreadPoolExecutor(16) as pool:  # again: every text is a cache hit, the batcher is not used
            warm = list(pool.map(lambda t: score(client, t), texts))

    for i, (got_cold, got_warm) in enumerate(zip(cold, warm, strict=True)):
        want: dict[str, Any] = {k: round(float(expected[i][j]), 6) for j, k in enumerate(keys)}
        assert got_cold == want, texts[i]
        assert got_warm == want, texts[i]
    # Each new text was encoded once, by the shared batcher, and stored; the repeats were all cache hits.
    assert missed_cold == len(texts)
    assert scoring.misses - missed == missed_cold
    stored = scoring.store.get_many([cache_key(scoring.id, t) for t in texts])
    assert len(stored) == len(texts)


@pytest.mark.database_free  # the embedding cache is a SQLite file beside any database
def test_a_score_answers_while_another_process_holds_the_cache(svc: Svc) -> None:
    """The worker process writes the same embedding cache (a training's or a pool's vectors) and, starved on a
    busy machine, may hold its write lock for minutes: a score request still answers, and its new vectors
    reach the cache once the lock is free (before, each piece waited 30 s for it and then failed)."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.held")
    train_ready(c, h, "acme.held")
    writer = sqlite3.connect(svc.ctx.embedders._cache_path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process's long write
        texts = [f"scored while the cache is held {i}" for i in range(3)]
        body = check(c.post("/v1/models/acme.held/score", json={"content": texts}, headers=h), 200)
        assert len(body["results"]) == 3
        writer.execute("COMMIT")
    finally:
        writer.close()
    store = svc.ctx.embedders._store
    assert store is not None
    keys = [cache_key(get_embedder("hashing").id, t) for t in texts]
    wait_until(lambda: len(store.get_many(keys)) == 3, 30, "the vectors to reach the cache")
