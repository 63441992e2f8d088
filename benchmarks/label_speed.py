"""Label page speed: a pool import of 10,000 texts, and key press to next text at 10,000 stored samples.

    python -m benchmarks.label_speed [--embedder minilm] [--samples 10000] [--pool 10000] [--labels 40]

One local service (`core.local`, the given embedder; MiniLM by default, as `make run` uses) in a temporary
data directory, real texts read from ../shared/datasets (never copied):

(a) Pool import: 10,000 Stanford politeness requests into a fresh model's pool through `Client.import_pool`
    (the Label page's import: batches of 250 that shrink on a slow service), cold embedding cache: wall time,
    texts a second, batches, and the report's count.
(b) Key press to next text: a draft with one trait and `--samples` stored samples (the politeness requests,
    quality 1 at a normalised score >= 0), its pool the subjectivity and abuse texts. The Label page runs in
    `streamlit run` and headless Chromium; each of `--labels` presses of `1`/`2` is timed from the press to
    the moment the page shows a different text (the label stored, the page rerun, suggestions refilled every
    20 labels). Median, p90, max.
(c) For scale, in the same run: what one label cost before (the old page recomputed the out-of-fold AUC on
    every label: every stored sample read, embedded and refitted), now the on-demand "Update the AUC chart":
    a cold embedding cache (the first click in a workbench process) and a warm one (every later click).

Writes benchmarks/results/label_speed.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.contract import MAX_TEXT_CHARS
from core.local import start_local_service
from harness.datasets import datasets_dir
from harness.streamlit import streamlit_app

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "label_speed.json"


def politeness(base: Path) -> pd.DataFrame:
    frames = [
        pd.read_csv(base / "stanford_politeness" / f)[["Request", "Normalized Score"]]
        for f in ("wikipedia.annotated.csv", "stack-exchange.annotated.csv")
    ]
    rows = pd.concat(frames, ignore_index=True).dropna()
    rows["Request"] = rows["Request"].astype(str).str.strip()
    rows = rows[rows["Request"].str.len().between(1, MAX_TEXT_CHARS)].drop_duplicates("Request")
    return rows.reset_index(drop=True)


def other_texts(base: Path) -> list[str]:
    """Subjectivity sentences and abuse messages: the label benchmark's pool (texts no sample has)."""
    texts: list[str] = []
    for f in ("train.csv", "val.csv", "test.csv"):
        texts += pd.read_csv(base / "newssd_eng_subjectivity" / f)["Sentence"].astype(str).tolist()
    for f in ("ConvAbuseEMNLPtrain.csv", "ConvAbuseEMNLPvalid.csv", "ConvAbuseEMNLPtest.csv"):
        texts += pd.read_csv(base / "convabuse" / f)["user"].astype(str).tolist()
    return list(dict.fromkeys(t.strip() for t in texts if 0 < len(t.strip()) <= MAX_TEXT_CHARS))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_pool_import(client: Any, texts: list[str]) -> dict[str, Any]:
    handle = "local.bench-pool"
    client.create_model(handle, description="pool import benchmark")
    client.add_traits(handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}])
    started = time.perf_counter()
    report = client.import_pool(handle, texts)
    seconds = time.perf_counter() - started
    return {
        "texts": len(texts),
        "seconds": round(seconds, 1),
        "texts_per_second": round(len(texts) / seconds, 1),
        "batches": report.batches,
        "stored": report.stored,
        "complete": report.complete,
        "error": report.error,
        "pool_total": client.list_pool_page(handle, limit=1).total,
        "load": load(),
    }


def make_label_model(client: Any, rows: pd.DataFrame, pool: list[str], n: int) -> str:
    handle = "local.bench-label"
    client.create_model(handle, description="label speed benchmark")
    client.add_traits(handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}])
    chosen = rows.head(n)
    samples = [
        {"trait": "politeness", "text": t, "quality": 1.0 if s >= 0 else 0.0}
        for t, s in zip(chosen["Request"], chosen["Normalized Score"], strict=True)
    ]
    report = client.import_samples(handle, samples)
    assert report.stored == len(samples), report.errors[:3]
    assert client.import_pool(handle, pool).complete
    return handle


def bench_keys(url: str, handle: str, presses: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from harness.browser import IDLE, launch

    times: list[float] = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{url}/label?model={handle}")
        text = page.locator("[data-testid='label-text']").first
        text.wait_for(timeout=600_000)  # the first suggestions embed the stored samples once
        page.evaluate("document.activeElement && document.activeElement.blur()")
        for i in range(presses):
            before = text.inner_text()
            started = time.perf_counter()
            page.keyboard.press("2" if i % 2 else "1")
            page.wait_for_function(
                "prev => { const e = document.querySelector(\"[data-testid='label-text']\");"
                " return e && e.innerText !== prev; }",
                arg=before,
                timeout=120_000,
                polling=20,
            )
            times.append(time.perf_counter() - started)
            page.wait_for_selector(IDLE, timeout=120_000)  # the next press starts from an idle page
        browser.close()
    return {
        "presses": presses,
        "median_s": round(statistics.median(times), 3),
        "p90_s": round(float(np.quantile(times, 0.9)), 3),
        "max_s": round(max(times), 3),
        "times_s": [round(t, 3) for t in times],
        "load": load(),
    }


def bench_curve(client: Any, handle: str, embedder_name: str) -> dict[str, Any]:
    """The old per-label cost and the new on-demand chart point, on the same stored samples."""
    from app.labelling.labels_given import update_curve
    from app.labelling.session import LabelSession
    from core.embedders import get_embedder
    from core.embedders.cache import CachedEmbedder, MemoryStore

    session = LabelSession(handle, "politeness")
    cached = CachedEmbedder(get_embedder(embedder_name), MemoryStore(max_items=50_000))
    started = time.perf_counter()
    update_curve(session, client, cached)  # = one label before (no cache there: every label was this)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    auc = update_curve(session, client, cached)
    warm = time.perf_counter() - started
    return {"cold_s": round(cold, 2), "warm_s": round(warm, 2), "auc": auc, "load": load()}


def markdown(result: dict[str, Any]) -> str:
    imp, keys, curve = result["pool_import"], result["keys"], result["curve"]
    return "\n".join(
        [
            "| measure | figure | load (1/5/15 min) |",
            "|---|---:|---|",
            f"| pool import, {imp['texts']:,} texts (cold cache) | {imp['seconds']} s "
            f"({imp['texts_per_second']} texts/s, {imp['batches']} batches, {imp['stored']:,} stored) "
            f"| {imp['load']} |",
            f"| key press → next text, {result['samples']:,} stored samples ({keys['presses']} presses) "
            f"| median {keys['median_s']} s, p90 {keys['p90_s']} s, max {keys['max_s']} s | {keys['load']} |",
            f"| AUC chart point (before: every label), cold embedding cache | {curve['cold_s']} s "
            f"| {curve['load']} |",
            f"| AUC chart point, warm cache (each later click) | {curve['warm_s']} s | {curve['load']} |",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--pool", type=int, default=10_000)
    parser.add_argument("--labels", type=int, default=40)
    args = parser.parse_args(argv)

    base = datasets_dir()
    rows = politeness(base)
    result: dict[str, Any] = {
        "embedder": args.embedder,
        "samples": args.samples,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    with tempfile.TemporaryDirectory() as tmp:
        service = start_local_service(Path(tmp) / "service", embedder=args.embedder, startup_timeout=300)
        try:
            with service.client() as client:
                result["pool_import"] = bench_pool_import(client, rows["Request"].head(args.pool).tolist())
                print(json.dumps(result["pool_import"]), flush=True)
                handle = make_label_model(client, rows, other_texts(base), args.samples)
                env = {
                    "SCORING_API_URL": service.url,
                    "SCORING_API_KEY": service.api_key,
                    "SCORING_NAMESPACE": service.namespace,
                }
                with streamlit_app(Path(tmp), **env) as url:
                    result["keys"] = bench_keys(url, handle, args.labels)
                print(json.dumps(result["keys"]), flush=True)
                result["curve"] = bench_curve(client, handle, args.embedder)
        finally:
            service.stop()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
