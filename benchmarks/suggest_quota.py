"""Suggestions over a pool at the quota: 1,500 stored texts of 20,000 characters, on the blend.

`python -m benchmarks.suggest_quota [--texts 1500] [--chars N] [--embedder blend] [--k 10]`: the app
in-process on SQLite, no worker (so nothing embeds the pool behind the benchmark's back), a draft with one
trait and 40 short labelled texts, `--texts` pool texts of `--chars` characters imported. Timed, each a
`POST …/pool/suggest {"k": …}`:

- cold: nothing of the pool embedded yet (a fresh import, the worker not there yet): the suggestion embeds
  the texts its answer lacks itself and picks among them;
- cached: every pool text's vectors in the embedding cache, as the worker's embedding step leaves them.
  Written here as random unit vectors (each embedder's half, under its cache key): embedding 1,500 full
  windows with the blend is an hour of a core, and a suggestion's work does not depend on the values.
  First with the process's pool matrix dropped (read from the cache), then again (kept in memory).

Prints a markdown table and writes benchmarks/results/suggest_quota.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from core.contract import MAX_TEXT_CHARS
from core.embedders import CachedEmbedder, cache_key
from harness.datasets import datasets_dir
from harness.service import ROOT
from service.config.settings import Settings
from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.db import transaction

RESULTS = ROOT / "benchmarks" / "results" / "suggest_quota.json"
HANDLE = "bench.quota"
LABELS = [
    *[(f"Dear Sir, kindly find the report number {i} enclosed. Regards.", 1.0) for i in range(20)],
    *[(f"lol yo dude, number {i} is whatever, thx", 0.0) for i in range(20)],
]


def requests() -> list[str]:
    """The Stanford politeness requests (Wikipedia's), in file order."""
    path = datasets_dir() / "stanford_politeness" / "wikipedia.annotated.csv"
    with path.open(newline="", encoding="utf-8") as f:
        return [row["Request"].strip() for row in csv.DictReader(f) if row["Request"].strip()]


def text(seed: int, chars: int, corpus: list[str]) -> str:
    """Requests one after another from the `seed`th on, cut at `chars` characters: each text's window (its
    first few hundred tokens) differs, as real texts' do (texts of one vocabulary in any order are
    near-duplicates to an embedder, and suggestions skip those)."""
    out, i = [f"({seed})"], seed
    while sum(map(len, out)) + len(out) < chars:
        out.append(corpus[i % len(corpus)])
        i += 1
    return " ".join(out)[:chars]


def suggest(client: TestClient, key: dict[str, str], k: int) -> tuple[float, int]:
    started = time.perf_counter()
    resp = client.post(f"/v1/models/{HANDLE}/pool/suggest", json={"trait": "formality", "k": k}, headers=key)
    took = time.perf_counter() - started
    resp.raise_for_status()
    return took, len(resp.json()["items"])


def fill_cache(app: Any, embedder_name: str, texts: list[str]) -> None:
    """Each pool text's vectors in the embedding cache, as the worker's step writes them (random here)."""
    embedder = app.state.ctx.embedders.get(embedder_name)
    rng = np.random.default_rng(0)
    for part in getattr(embedder, "parts", None) or [embedder]:
        assert isinstance(part, CachedEmbedder)
        for start in range(0, len(texts), 250):
            piece = texts[start : start + 250]
            vecs = rng.standard_normal((len(piece), part.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            part.store.put_many({cache_key(part.id, t): v for t, v in zip(piece, vecs, strict=True)})


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="suggest-quota-") as tmp:
        settings = Settings.from_env(data_dir=Path(tmp), embedder=args.embedder, run_worker=False)
        app = create_app(settings)
        with TestClient(app) as client:
            with transaction(app.state.ctx.sessions) as s:
                key = {"Authorization": f"Bearer {create_key(s, ['bench'], 'authoring')}"}
            trait = {"name": "Formality", "positive_label": "formal", "negative_label": "casual"}
            # The tests' hashing embedder is no model's choice: a model without one gets the service's.
            model = {"handle": HANDLE} | ({} if args.embedder == "hashing" else {"embedder": args.embedder})
            client.post("/v1/models", json=model, headers=key).raise_for_status()
            client.post(
                f"/v1/models/{HANDLE}/traits", json={"traits": [trait]}, headers=key
            ).raise_for_status()
            samples = [{"trait": "formality", "text": t, "quality": q} for t, q in LABELS]
            client.post(
                f"/v1/models/{HANDLE}/samples", json={"samples": samples}, headers=key
            ).raise_for_status()
            corpus = requests()
            texts = [text(i * 11, args.chars, corpus) for i in range(args.texts)]
            started = time.perf_counter()
            for start in range(0, len(texts), 100):
                body = {"texts": texts[start : start + 100]}
                client.post(f"/v1/models/{HANDLE}/pool", json=body, headers=key).raise_for_status()
            imported = time.perf_counter() - started
            print(f"imported {len(texts)} texts of {args.chars} characters in {imported:.1f} s", flush=True)
            app.state.ctx.embedders.get(args.embedder).encode(["warm up"])  # the models loaded, not timed
            cold, cold_items = suggest(client, key, args.k)
            print(f"cold: {cold:.1f} s", flush=True)
            fill_cache(app, args.embedder, texts)
            app.state.ctx.pools.forget(_model_id(app))  # as a restarted process finds it
            cached, cached_items = suggest(client, key, args.k)
            again, again_items = suggest(client, key, args.k)
            print(f"cached: {cached:.1f} s, again {again:.1f} s", flush=True)
    return {
        "embedder": args.embedder,
        "texts": args.texts,
        "chars": args.chars,
        "k": args.k,
        "import_s": round(imported, 1),
        "cold_s": round(cold, 2),
        "cold_items": cold_items,
        "cached_s": round(cached, 2),
        "cached_items": cached_items,
        "again_s": round(again, 2),
        "again_items": again_items,
    }


def _model_id(app: Any) -> int:
    from sqlalchemy import select

    from service.store.schema import Model

    with app.state.ctx.reads() as s:
        found: int = s.scalar(select(Model.id).where(Model.handle == HANDLE))
    return found


def markdown(r: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| pool | embedder | k | cold: nothing embedded | cached: read from the cache "
            "| again: kept in memory |",
            "|---|---|---:|---:|---:|---:|",
            f"| {r['texts']:,} texts of {r['chars']:,} characters | `{r['embedder']}` | {r['k']} "
            f"| {r['cold_s']} s ({r['cold_items']} items) | {r['cached_s']} s ({r['cached_items']} items) "
            f"| {r['again_s']} s ({r['again_items']} items) |",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.suggest_quota", description=__doc__)
    p.add_argument("--texts", type=int, default=1500)
    p.add_argument("--chars", type=int, default=MAX_TEXT_CHARS, help="each pool text's (default: the most)")
    p.add_argument("--embedder", default="blend")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
