"""The in-process reference: the engine on the served version's snapshot, one text a call."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from benchmarks.load.drive import WARMUP_TEXT
from core.embedders import CachedEmbedder, MemoryStore, get_embedder
from core.engine import Scorer


class Engine:
    """The in-process engine on the served version's snapshot, as a notebook would use it: the default
    embedder (all cores) behind a fresh (cold) `CachedEmbedder` for every pass."""

    def __init__(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        self.embedder_id = Scorer.from_snapshot(snapshot).embedder_id
        self.base = get_embedder(self.embedder_id)
        self.base.encode([WARMUP_TEXT])  # load the model before timing, as the service has by now

    def scorer(self) -> Scorer:
        return Scorer.from_snapshot(self.snapshot, embedder=CachedEmbedder(self.base, MemoryStore()))

    @staticmethod
    def one_at_a_time(scorer: Scorer, texts: Sequence[str]) -> tuple[float, float]:
        """(texts/s, CPU ms a text), one text a call: like one request."""
        start, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            scorer.score([text])
        seconds = time.perf_counter() - start
        return len(texts) / seconds, 1000 * (time.process_time() - cpu) / len(texts)

    def cold(self, texts: Sequence[str]) -> tuple[float, float]:
        return self.one_at_a_time(self.scorer(), texts)

    def extras(self, texts: Sequence[str]) -> dict[str, float]:
        """For information: batches of 32 (cold), and one text a call with the cache warm."""
        scorer = self.scorer()
        start = time.perf_counter()
        for i in range(0, len(texts), 32):
            scorer.score(list(texts[i : i + 32]))
        batched = len(texts) / (time.perf_counter() - start)
        warm, _ = self.one_at_a_time(scorer, texts)
        return {"batch32_tps": round(batched, 2), "single_warm_tps": round(warm, 2)}
