"""Evaluation benchmark: `python -m benchmarks.evaluation [--items N]`.

Evaluating a version on a 10,000-item evaluation set through the real service (in-process app, MiniLM,
SQLite, its own worker), then a second version on the same set. The second run finds every text's embedding
in the cache, so it should cost ≤ 10% of the first. Texts: Stanford politeness requests (Wikipedia and Stack
Exchange), read from ../shared/datasets at run time, never copied; 400 train a `politeness` trait, the next N
are the evaluation set. Durations are the runs' own `started_at` → `finished_at`.

Prints a markdown table and writes benchmarks/results/evaluation.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from core.contract import MAX_TEXT_CHARS
from harness.datasets import datasets_dir
from service.config.settings import Settings
from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.db import transaction

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "evaluation.json"
N_TRAIN = 400


def load() -> list[tuple[str, float]]:
    """(text, quality): quality is the rank of the normalised politeness score within its file, in [0, 1]."""
    out: list[tuple[str, float]] = []
    for name in ("wikipedia.annotated.csv", "stack-exchange.annotated.csv"):
        with (datasets_dir() / "stanford_politeness" / name).open(newline="", encoding="utf-8") as fh:
            rows = [(r["Request"].strip(), float(r["Normalized Score"])) for r in csv.DictReader(fh)]
        rows = [r for r in rows if r[0] and len(r[0]) <= MAX_TEXT_CHARS]
        order = sorted(range(len(rows)), key=lambda i: rows[i][1])
        rank = {i: pos / (len(rows) - 1) for pos, i in enumerate(order)}
        out += [(rows[i][0], rank[i]) for i in range(len(rows))]
    seen: set[str] = set()
    unique = []
    for text, q in out:
        if text not in seen:
            seen.add(text)
            unique.append((text, q))
    return unique


def _wait(c: TestClient, handle: str, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    while True:
        op = c.get(f"/v1/models/{handle}", headers=headers).json()["last_operation"]
        if op and op["run_id"] == run_id and op["status"] in ("succeeded", "failed"):
            assert op["status"] == "succeeded", op
            return op
        time.sleep(0.2)


def _seconds(op: dict[str, Any]) -> float:
    started, finished = (datetime.fromisoformat(op[k]) for k in ("started_at", "finished_at"))
    return (finished - started).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args()
    rows = load()
    train_rows, eval_rows = rows[:N_TRAIN], rows[N_TRAIN : N_TRAIN + args.items]
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings.from_env(data_dir=Path(tmp), embedder="minilm"))
        with TestClient(app) as c:
            with transaction(app.state.ctx.sessions) as s:
                h = {"Authorization": f"Bearer {create_key(s, ['bench'], 'authoring')}"}
            handle = "bench.politeness"
            c.post("/v1/models", json={"handle": handle}, headers=h).raise_for_status()
            trait = {"name": "Politeness", "positive_label": "polite", "negative_label": "impolite"}
            c.post(f"/v1/models/{handle}/traits", json={"traits": [trait]}, headers=h).raise_for_status()
            samples = [{"trait": "politeness", "text": t, "quality": q} for t, q in train_rows]
            c.post(f"/v1/models/{handle}/samples", json={"samples": samples}, headers=h).raise_for_status()
            items = [{"trait": "politeness", "text": t, "quality": q} for t, q in eval_rows]
            for start in range(0, len(items), 500):
                batch = {"items": items[start : start + 500]}
                c.post(f"/v1/models/{handle}/evaluation-set", json=batch, headers=h).raise_for_status()
            run = c.post(f"/v1/models/{handle}/train", json={"effort": "low"}, headers=h).json()["run_id"]
            _wait(c, handle, h, run)
            timings = []
            for ref in ("v1", "v2"):
                if ref == "v2":  # a second version: retune (same embedder, new parameters)
                    body = {"effort": "low", "reoptimize_params": True}
                    run = c.post(f"/v1/models/{handle}/train", json=body, headers=h).json()["run_id"]
                    _wait(c, handle, h, run)
                run = c.post(f"/v1/models/{handle}/versions/{ref}/evaluate", headers=h).json()["run_id"]
                timings.append(_seconds(_wait(c, handle, h, run)))
            result = c.get(f"/v1/models/{handle}/versions/v2/evaluation", headers=h).json()
            # The per-item reads over the whole set: PR curve (thresholds) and the side-by-side comparison.
            began = time.perf_counter()
            c.get(f"/v1/models/{handle}/versions/v2/pr-curve", headers=h).raise_for_status()
            pr_s = time.perf_counter() - began
            began = time.perf_counter()
            params: dict[str, str | int] = {"a": "v1", "b": "v2", "limit": 1000}
            compared = c.get(f"/v1/models/{handle}/evaluation/compare", params=params, headers=h)
            compare_s = time.perf_counter() - began
            compared.raise_for_status()
    first, second = timings
    auc = result["traits"]["politeness"]["roc_auc"]
    report = {
        "items": len(eval_rows),
        "first_version_s": round(first, 2),
        "second_version_s": round(second, 2),
        "ratio": round(second / first, 4),
        "roc_auc_v2": auc,
        "pr_curve_s": round(pr_s, 2),
        "compare_s": round(compare_s, 2),
        "roc_auc_difference": compared.json()["traits"]["politeness"]["roc_auc"],
        "cpu_count": os.cpu_count(),
        "load_average_start": os.getloadavg()[0],
        "platform": platform.platform(),
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print("| measure | value | target |\n|---|---|---|")
    print(f"| evaluating v1 on {len(eval_rows):,} texts (cold embedding cache) | {first:.1f} s | |")
    share = f"{second:.1f} s ({second / first:.1%} of v1)"
    print(f"| evaluating v2 on the same texts (cached embeddings) | {share} | ≤ 10% |")
    print(f"| PR curve of v2 over the set (GET …/pr-curve) | {pr_s:.2f} s | |")
    print(f"| v1 vs v2 side by side (GET …/evaluation/compare, paired tests) | {compare_s:.2f} s | |")
    print(f"ROC-AUC of v2: {auc}")


if __name__ == "__main__":
    main()
