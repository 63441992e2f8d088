"""A pool import beside a sample import of as many texts, and what single-text scoring feels meanwhile.

`python -m benchmarks.pool_import [--texts 3000] [--embedder e5-small-qint8]`: a local service as the
workbench starts it (SQLite, its worker a child process, the embedder given), texts of the politeness corpus
(mean 128 characters). A model trained on 200 samples is scored one new text at a time (what the Demo and
Score pages send) on the idle service, then all through the pool import and until the worker has embedded
every pool text (read from the service's embedding cache). Reports the sample import's and the pool
import's wall time and ms a text, the seconds until the pool is embedded, and the score calls' median and
worst latency idle, during the import's requests, and after them. Writes benchmarks/results/pool_import.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.scale.corpus import Corpus
from core.client import Client
from core.embedders import CachedEmbedder, cache_key
from core.local import start_local_service

RESULTS = Path(__file__).parent / "results" / "pool_import.json"
TRAIT = {"name": "polite", "positive_label": "polite", "negative_label": "rude"}


def _model(client: Client, handle: str) -> None:
    client.create_model(handle)  # on the service's default embedder (a test one is not a choice)
    client.add_traits(handle, [TRAIT])


def _ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"calls": 0}
    return {
        "calls": len(values),
        "median_ms": round(statistics.median(values) * 1000),
        "max_ms": round(max(values) * 1000),
    }


class Prober:
    """Scores one new text at a time on `handle`, every `pause_s`, labelling each call with the phase it
    started in."""

    def __init__(self, client: Client, handle: str, texts: list[str], pause_s: float = 0.25) -> None:
        self.client, self.handle, self.texts, self.pause_s = client, handle, texts, pause_s
        self.phase = "idle"
        self.seen: dict[str, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._i = 0

    def _loop(self) -> None:
        while not self._stop.is_set():
            phase, text = self.phase, f"{self.texts[self._i % len(self.texts)]} (probe {self._i})"
            self._i += 1
            start = time.perf_counter()
            self.client.score(self.handle, text)
            self.seen.setdefault(phase, []).append(time.perf_counter() - start)
            self._stop.wait(self.pause_s)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.pool_import", description=__doc__)
    p.add_argument("--texts", type=int, default=3000)
    p.add_argument("--embedder", default="e5-small-qint8")
    p.add_argument("--idle-s", type=float, default=8.0, help="seconds of scoring on the idle service")
    p.add_argument("--timeout-s", type=float, default=1800.0, help="the longest wait for the embedding")
    args = p.parse_args(argv)
    corpus = Corpus.load("politeness")
    n = args.texts
    samples = corpus.samples(0, n)
    pool = [corpus.text(i) for i in range(n, 2 * n)]
    probes = [corpus.text(i) for i in range(2 * n, 2 * n + 500)]
    out: dict[str, Any] = {"texts": n, "embedder": args.embedder}
    with tempfile.TemporaryDirectory(prefix="pool-import-") as tmp:
        service = start_local_service(Path(tmp), embedder=args.embedder, namespace="bench")
        with service, service.client(timeout=600) as client, service.client(timeout=600) as prober:
            scored, s_handle, p_handle = (service.handle(x) for x in ("scored", "samples", "pool"))
            for handle in (scored, s_handle, p_handle):
                _model(client, handle)
            client.import_samples(scored, corpus.samples(4 * n, 200))
            client.wait(scored, client.train(scored).run_id, timeout=args.timeout_s)

            start = time.perf_counter()
            client.import_samples(s_handle, samples)
            out["sample_import_s"] = round(time.perf_counter() - start, 1)

            cache = service.embedder(args.embedder)
            assert isinstance(cache, CachedEmbedder)
            keys = [cache_key(cache.id, t.strip()) for t in pool]
            client.score(scored, "The first call loads the scorer: not a figure of the import.")
            with Prober(prober, scored, probes) as probe:
                time.sleep(args.idle_s)
                probe.phase = "import"
                start = time.perf_counter()
                report = client.import_pool(p_handle, pool)
                out["pool_import_s"] = round(time.perf_counter() - start, 1)
                probe.phase = "after"
                while len(cache.store.get_many(keys)) < len(set(keys)):
                    if time.perf_counter() - start > args.timeout_s:
                        raise SystemExit(f"the pool was not embedded within {args.timeout_s:.0f} s")
                    time.sleep(0.5)
                out["pool_embedded_s"] = round(time.perf_counter() - start, 1)
            assert report.complete and report.added == len(set(pool)), report
    out["sample_import_ms_a_text"] = round(out["sample_import_s"] * 1000 / n, 1)
    out["pool_import_ms_a_text"] = round(out["pool_import_s"] * 1000 / n, 1)
    out["score_calls"] = {phase: _ms(values) for phase, values in probe.seen.items()}
    out["machine"] = f"{platform.machine()}, {os.cpu_count()} cores"
    out["measured_at"] = datetime.now().isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
