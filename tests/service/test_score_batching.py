"""Concurrent score requests over real HTTP: each gets its own scores; misses go through one batcher."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from core.embedders import BatchingEmbedder, CachedEmbedder, cache_key, get_embedder
from core.engine import Scorer
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

    with loopback(svc) as url, httpx.Client(base_url=url, headers=h, timeout=60, trust_env=False) as client:
        with ThreadPoolExecutor(16) as pool:
            cold = list(pool.map(lambda t: score(client, t), texts))
        scoring = svc.ctx.embedders.for_scoring()  # the retaining one: this model is not under ZDR
        assert isinstance(scoring, CachedEmbedder) and isinstance(scoring.embedder, BatchingEmbedder)
        batcher = scoring.embedder
        encoded_cold = batcher.texts
        with ThreadPoolExecutor(16) as pool:  # again: every text is a cache hit, the batcher is not used
            warm = list(pool.map(lambda t: score(client, t), texts))

    for i, (got_cold, got_warm) in enumerate(zip(cold, warm, strict=True)):
        want: dict[str, Any] = {k: round(float(expected[i][j]), 6) for j, k in enumerate(keys)}
        assert got_cold == want, texts[i]
        assert got_warm == want, texts[i]
    # Each new text was encoded once, by the shared batcher, and stored; the repeats were all cache hits.
    assert encoded_cold == len(texts)
    assert batcher.texts == encoded_cold
    stored = scoring.store.get_many([cache_key(scoring.id, t) for t in texts])
    assert len(stored) == len(texts)
