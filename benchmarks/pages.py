"""Page-speed benchmark of the workbench in Chromium: `python -m benchmarks.pages [--embedder …]`.

One local service holds the demo models (`core.demo`, trained as on a first start) and a 10,000-sample model
(Stanford politeness requests from ../shared/datasets, one trait, trained at effort `low`, with a 3,955-text
unlabelled pool: the Label page's suggestions, timed to the first text on screen after its cold visit). For
each of the two models and each page, a fresh `streamlit run app/main.py` (against that service, as a remote)
is opened in a new browser session on the Models page with the model picked; then the time is taken from a
click on the page's link in the sidebar to the page being idle (the script finished, nothing stale on screen,
the page's heading drawn): **cold** is that first visit (the page's script, imports and caches fresh),
**warm** the best of three later visits (away to Models and back). Before those, on a fresh Demo page of each
model: seconds from the first pause in typing (two words typed) to the first bars (`--demo-only` measures just
that).

Prints a table and writes benchmarks/results/pages.json (with `uptime`'s load, which the figures depend on).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.evaluation import load
from benchmarks.label_speed import other_texts
from core.client import Client
from core.contract import pole_of
from core.demo import load_demo_models
from core.local import LocalService, start_local_service
from harness import browser as chromium
from harness.datasets import datasets_dir
from harness.streamlit import streamlit_app

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "pages.json"
PAGES = ["Traits", "Samples", "Label", "Training", "Versions", "Score", "Demo", "Settings", "Models"]
BIG = "big-politeness"
# Idle: the script runner stopped, no element left stale from the previous page, and the page's own mark.
IDLE_JS = """([mark]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  if (document.querySelector("[data-stale='true']")) return false;
  return [...document.querySelectorAll(mark.selector)].some(e => e.textContent.includes(mark.text));
}"""


def mark(page: str) -> dict[str, str]:
    if page == "Demo":  # a presentation view: the model's description as its heading; the examples' caption
        return {"selector": ".st-key-demo_presets", "text": "Examples"}
    return {"selector": "h1", "text": page}


def workbench(service: LocalService, data_dir: Path) -> AbstractContextManager[str]:
    """A fresh workbench process against `service`, as a remote."""
    env = {"SCORING_API_URL": service.url, "SCORING_API_KEY": service.api_key}
    return streamlit_app(data_dir, SCORING_EMBEDDER=service_embedder(), **env)


def service_embedder() -> str:
    return os.environ.get("BENCH_EMBEDDER", "hashing")


def click_to_idle(page: Any, title: str, timeout: float = 120_000) -> float:
    link = page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True)
    expand = page.locator("[data-testid='stExpandSidebarButton']")
    if expand.count() and expand.first.is_visible():  # the Demo page starts with the sidebar collapsed
        expand.first.click()
        link.wait_for()
    started = time.perf_counter()
    link.click()
    page.wait_for_function(IDLE_JS, arg=[mark(title)], timeout=timeout, polling=50)
    return time.perf_counter() - started


def measure(
    browser: Any, service: LocalService, handle: str, data_dir: Path, pages: list[str], pool: bool = False
) -> dict[str, dict[str, float]]:
    """`pool`: the model has an unlabelled pool, so the Label page also shows a first suggestion (fetched
    after its first paint): the seconds from the click to that text are kept as `first_text_s`."""
    out: dict[str, dict[str, float]] = {}
    for title in pages:
        with workbench(service, data_dir) as url:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(f"{url}/?model={handle}")
            page.wait_for_function(IDLE_JS, arg=[mark("Models")], timeout=300_000, polling=100)
            if title == "Models":  # the start page itself: go elsewhere first, so the click loads it
                click_to_idle(page, "Settings")
            clicked = time.perf_counter()
            cold = click_to_idle(page, title)
            first_text = None
            if title == "Label" and pool:
                page.locator("[data-testid='label-text']").first.wait_for(timeout=300_000)
                first_text = time.perf_counter() - clicked
                page.wait_for_function(IDLE_JS, arg=[mark(title)], timeout=120_000, polling=50)
            warm = []
            for _ in range(3):
                click_to_idle(page, "Settings" if title == "Models" else "Models")
                warm.append(click_to_idle(page, title))
            context.close()
        out[title] = {"cold_s": round(cold, 2), "warm_s": round(min(warm), 2)}
        extra = ""
        if first_text is not None:
            out[title]["first_text_s"] = round(first_text, 2)
            extra = f"  (first suggestion {first_text:5.2f} s)"
        print(f"  {handle:32s} {title:9s} cold {cold:5.2f} s  warm {min(warm):5.2f} s{extra}", flush=True)
    return out


def first_score(browser: Any, service: LocalService, handle: str, data_dir: Path) -> float:
    """Seconds from the first pause in typing to the first bars, on a fresh Demo page (a new workbench
    process, the service's scorer for the model not loaded yet): the presenter types two words and stops."""
    with workbench(service, data_dir) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(f"{url}/demo?model={handle}")
        page.wait_for_function(IDLE_JS, arg=[mark("Demo")], timeout=300_000, polling=100)
        page.locator("textarea.live-text").click()
        page.keyboard.type("Thank you", delay=80)
        paused = time.perf_counter()
        # .first: while the chart is redrawn, the old plot may still be in the DOM beside the new one.
        page.locator(".st-key-demo_chart .js-plotly-plot").first.wait_for(timeout=120_000)
        seconds = time.perf_counter() - paused
        context.close()
    print(f"  {handle:32s} Demo: first bars {seconds:5.2f} s after the first pause", flush=True)
    return seconds


def big_model(client: Client, handle: str, n: int) -> None:
    # Each text on its pole (a neutral one, quality 0.5, is on neither and left out).
    poles = [(t, pole_of(q)) for t, q in load()[:n]]
    rows = [
        {"trait": "politeness", "text": t, "quality": float(p == "positive")}
        for t, p in poles
        if p != "neutral"
    ]
    client.create_model(handle, description="Politeness of requests (10,000 samples)")
    client.add_traits(handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}])
    client.import_samples(handle, rows)  # in batches of the most a request takes
    run = client.train(handle, effort="low")
    client.wait(handle, run.run_id, timeout=1800)
    # An unlabelled pool for the Label page: benchmarks.label_speed's 3,955 subjectivity and abuse texts.
    assert client.import_pool(handle, other_texts(datasets_dir())).complete


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    parser.add_argument("--demo-only", action="store_true", help="only the Demo page's first score")
    parser.add_argument("--pages", nargs="+", default=PAGES, choices=PAGES, help="the pages to time")
    args = parser.parse_args()
    os.environ["BENCH_EMBEDDER"] = args.embedder
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, start_local_service(tmp, embedder=args.embedder) as service:
        with service.client(timeout=120) as client:
            load_demo_models(client, service.namespace, train=True)
            big_model(client, service.handle(BIG), args.samples)
        load_before = os.getloadavg()
        results: dict[str, Any] = {}
        live: dict[str, float] = {}
        with sync_playwright() as p:
            browser = chromium.launch(p)
            handles = (service.handle("support-replies"), service.handle(BIG))
            for handle in handles:  # first, while no page has made the service load these scorers
                live[handle] = round(first_score(browser, service, handle, Path(tmp)), 2)
            for handle in handles if not args.demo_only else ():
                pool = handle.endswith(BIG)
                results[handle] = measure(browser, service, handle, Path(tmp), args.pages, pool)
            browser.close()
    report = {
        "pages": results,
        "demo_first_score_s": live,
        "embedder": args.embedder,
        "big_model_samples": args.samples,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    partial = args.demo_only or args.pages != PAGES
    out = RESULTS.with_name("pages_partial.json") if partial else RESULTS
    for handle, pages in results.items():
        worst = max(pages.values(), key=lambda r: r["cold_s"])
        print(
            f"{handle}: worst cold {worst['cold_s']} s, median warm "
            f"{statistics.median(r['warm_s'] for r in pages.values())} s"
        )
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
