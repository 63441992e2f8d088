"""First visit of a fresh workbench: `python -m benchmarks.first_run [--runs 2]`.

As `make run` starts it (`python -m app.launch`, else `streamlit run app/main.py`; no SCORING_API_URL, the
default embedder) with an empty data directory: seconds from the start to Streamlit's health check answering,
then from a headless Chromium's first visit (1280×800) to the Models page idle (script finished, nothing
stale, its heading drawn). Whether on that visit or from the launch, the local service and its worker start,
the new database is migrated and the key created; the visit opens the first demo model while the demo models
train in the background. `--demo-trained` then waits for them: seconds from the start until every demo model
the manifest trains has a version (in a new data directory the service also builds its int8 graphs first, as
on a new machine). Each run in a new data directory.

Several data directories on one machine: `--runs 2 --demo-trained --first-training --empty-graphs` starts each
run's workbench over a new data directory, all of them with one graphs' cache that starts empty
(`SCORING_EMBEDDER_DIR`, as a new user's), and after the demo models trains the draft demo model as a
newcomer's first default (`auto`) training would: seconds to its version, the embedder it took, and what its
progress said it waited for. The graphs are built once, in the background (`prebuild.log` of the cache, whose
builds the report lists); the second data directory's first training finds them, or trains on e5-small alone
while mpnet-base's is still building.

`--python` and `--root` time another checkout with its own venv (a fresh clone after `make
.venv/.installed-runtime`: its first start also byte-compiles what it imports, as `make run` installs
without compiling). Prints each run with `uptime`'s load and writes benchmarks/results/first_run.json
(`--output` another file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.pages import IDLE_JS, mark
from core.client import Client
from core.demo import read_demo_model, read_manifest
from core.local import KEY_FILE, free_port
from harness import browser as chromium

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "first_run.json"


DEMO_TRAINED_TIMEOUT_S = 1800.0


def service_client(data_dir: Path) -> Client:
    """A client of the local service of `data_dir` (its address is in its log)."""
    ready = [x for x in (data_dir / "service.log").read_text().splitlines() if "ready on http" in x][-1]
    return Client(ready.split("ready on ")[1].strip(), (data_dir / KEY_FILE).read_text().strip())


def demo_trained(data_dir: Path, root: Path) -> None:
    """Wait until every demo model the manifest trains has a version (the service's address is in its log)."""
    demos = root / "sample_data"
    slugs = [e.slug for e in read_manifest(demos) if e.on_first_start != "draft"]
    wanted = {read_demo_model(slug, demos).name for slug in slugs}
    deadline = time.monotonic() + DEMO_TRAINED_TIMEOUT_S
    with service_client(data_dir) as client:
        while time.monotonic() < deadline:
            models = client.list_models(namespace="local")
            trained = {m.handle.split(".", 1)[1] for m in models if m.version_no}
            if wanted <= trained:
                return
            time.sleep(0.5)
    raise TimeoutError(f"the demo models {sorted(wanted)} were not trained in {DEMO_TRAINED_TIMEOUT_S:.0f} s")


def first_training(data_dir: Path, root: Path) -> dict[str, Any]:
    """Train the draft demo model (`auto`, as a newcomer's first model): seconds to its version, the embedder
    the version took (in words), and the progress messages that said what the run waited for."""
    demos = root / "sample_data"
    draft = next(e.slug for e in read_manifest(demos) if e.on_first_start == "draft")
    with service_client(data_dir) as client:
        handle = f"local.{read_demo_model(draft, demos).name}"
        started = time.perf_counter()
        run_id = client.train(handle, effort="low").run_id
        said: list[str] = []
        while True:
            model = client.get_model(handle)
            op = model.last_operation
            message = op.progress.get("message") if op is not None and isinstance(op.progress, dict) else None
            if isinstance(message, str) and message not in said:
                said.append(message)
            if model.state != "busy" and op is not None and op.run_id == run_id:
                break
            time.sleep(0.5)
        seconds = time.perf_counter() - started
        words = client.get_version(handle, model.version_no).embedder_words if model.version_no else ""
    return {
        "first_training_s": round(seconds, 1),
        "first_training_version": words,
        "first_training_said": [m for m in said if "graph" in m],
    }


def graph_builds(cache: Path) -> list[str]:
    """The builds the graphs' cache's background prebuild logged (the detached builds left running are
    awaited first: their process holds each graph's lock)."""
    log = next(cache.glob("*/prebuild.log"), None)
    if log is None:
        return []
    while "building" in log.read_text().splitlines()[-1]:  # a build under way: its "built in" line follows
        time.sleep(5)
    return [line for line in log.read_text().splitlines() if " built in " in line]


def one_run(
    browser: Any,
    data_dir: Path,
    python: str,
    root: Path,
    wait_demo: bool = False,
    graphs: Path | None = None,
    train_first: bool = False,
) -> dict[str, Any]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORING_")}
    env |= {"SCORING_DATA_DIR": str(data_dir), "PYTHONPATH": str(root)}
    if graphs is not None:
        env["SCORING_EMBEDDER_DIR"] = str(graphs)
    # As `make run` starts it: app.launch (the service starting with Streamlit) where the checkout has it.
    launch = ["-m", "app.launch"]
    if not (root / "app" / "launch.py").exists():
        launch = ["-m", "streamlit", "run", str(root / "app" / "main.py")]
    cmd = [python, *launch, "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless",
           "true", "--logger.level", "warning"]  # fmt: skip
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with open(data_dir / "streamlit.log", "wb") as log:
        server = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            while True:
                try:
                    if httpx.get(f"{url}/_stcore/health", timeout=1).text == "ok":
                        break
                except httpx.HTTPError:
                    time.sleep(0.05)
            up = time.perf_counter() - started
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            visited = time.perf_counter()
            page.goto(url)
            page.wait_for_function(IDLE_JS, arg=[mark("Models")], timeout=300_000, polling=50)
            visit = time.perf_counter() - visited
            context.close()
            if wait_demo:
                demo_trained(data_dir, root)
            trained = time.perf_counter() - started
            first = first_training(data_dir, root) if train_first else {}
        finally:
            server.terminate()
            server.wait(timeout=30)
    result: dict[str, Any] = {
        "streamlit_up_s": round(up, 2),
        "first_visit_s": round(visit, 2),
        "load_1min": round(load, 2),
    }
    result["start_to_page_s"] = round(up + visit, 2)
    if wait_demo:
        result["start_to_demo_trained_s"] = round(trained, 1)
    print(
        f"  Streamlit up {up:5.2f} s, first visit to the Models page idle {visit:5.2f} s, "
        f"start to page {up + visit:5.2f} s (load {load:.2f}, {' '.join(launch[1:2])})"
        + (f", demo models trained {trained:.1f} s after the start" if wait_demo else "")
    )
    if first:
        result |= first
        print(f"  first default training {first['first_training_s']} s: {first['first_training_version']}")
        print("".join(f"    said: {m}\n" for m in first["first_training_said"]), end="")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable, help="runs Streamlit (e.g. a fresh clone's venv)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app/main.py runs")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--demo-trained", action="store_true", help="also time the demo models' training")
    parser.add_argument("--first-training", action="store_true", help="then train the draft demo (`auto`)")
    parser.add_argument("--empty-graphs", action="store_true", help="every run on one new graphs' cache")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    runs = []
    with tempfile.TemporaryDirectory() as cache, sync_playwright() as p:
        graphs = Path(cache) if args.empty_graphs else None
        browser = chromium.launch(p)
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                demo, first = args.demo_trained, args.first_training
                runs.append(one_run(browser, Path(tmp), args.python, args.root, demo, graphs, first))
        browser.close()
        builds = graph_builds(graphs) if graphs is not None else []
    print("".join(f"  graphs' cache: {line}\n" for line in builds), end="")
    report = {
        "runs": runs,
        "graph_builds": builds,
        "python": args.python,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "measured_at": datetime.now().isoformat(timespec="seconds"),
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
