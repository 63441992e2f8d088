"""Scoring beside a training and a graph build: `python -m benchmarks.score_beside_work [--embedder auto]
[--texts 219] [--build e5|none] [--repeats 2]`.

Starts `serve` as the embedded setup (one API process, its worker child) on SQLite with `--embedder` (the
int8 graphs from `SCORING_EMBEDDER_DIR` if set), trains the first demo model, scores one text (the scorer
loaded) and times the scoring of `--texts` texts the model never saw (the requests
`score_many` sends) on it: first with nothing else running (*idle*), then again with other texts while a
training of a second demo model runs in the worker child and, with `--build e5`, a process builds e5-small's
int8 graph into a fresh directory (a first start's build; a minute or more of CPU) (*beside*). Each phase
scores new texts, so every vector is computed and written to the embedding cache the worker writes too.
Target: every request answered (200), beside work within a few times its idle time. Prints the figures and
writes benchmarks/results/score_beside_work.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks.load.fleet import NAMESPACE, running_service
from benchmarks.load.models import build_and_train, create
from benchmarks.load.texts import demo_slugs, score_texts
from core.contract import MAX_SCORE_TEXTS
from core.demo import read_demo_model
from harness.service import ROOT
from harness.waiting import wait_until

RESULTS = ROOT / "benchmarks" / "results" / "score_beside_work.json"
# e5-small's int8 graph built into a directory of its own: the build a first start runs beside everything.
BUILD = (
    "import sys; from core.embedders.e5_quantized import E5QuantizedEmbedder; "
    "E5QuantizedEmbedder(directory=sys.argv[1]).graph_path()"
)


def score(client: httpx.Client, handle: str, texts: list[str]) -> tuple[float, int]:
    """Seconds until `texts` are scored, in requests of at most MAX_SCORE_TEXTS as `score_many` sends them,
    and the last status that was not 200 (else 200)."""
    start = time.perf_counter()
    status = 200
    for at in range(0, len(texts), MAX_SCORE_TEXTS):
        resp = client.post(f"/v1/models/{handle}/score", json={"content": texts[at : at + MAX_SCORE_TEXTS]})
        status = resp.status_code if resp.status_code != 200 else status
    return time.perf_counter() - start, status


@contextlib.contextmanager
def building(kind: str) -> Iterator[subprocess.Popen[bytes] | None]:
    """A process building e5-small's int8 graph into a temporary directory (`kind` "e5"), or nothing."""
    if kind == "none":
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="graph-build-") as where:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        build = subprocess.Popen([sys.executable, "-c", BUILD, where], cwd=ROOT, env=env)
        try:
            yield build
        finally:
            build.kill()
            build.wait()


def run(embedder: str, n_texts: int, build: str, repeats: int, effort: str = "high") -> dict[str, Any]:
    slugs = demo_slugs()
    first, second = read_demo_model(slugs[0]), read_demo_model(slugs[1 % len(slugs)])
    texts = score_texts(first, n_texts * (1 + repeats) + 1)
    if len(texts) < n_texts * (1 + repeats) + 1:
        raise SystemExit(f"only {len(texts)} texts to score; ask for fewer")
    # The int8 graphs already built (SCORING_EMBEDDER_DIR, e.g. the tests' cache): the graph built beside is
    # another one, in a directory of its own.
    graphs = (
        {"SCORING_EMBEDDER_DIR": os.environ["SCORING_EMBEDDER_DIR"]}
        if "SCORING_EMBEDDER_DIR" in os.environ
        else {}
    )
    with (
        running_service("sqlite", embedder, env=graphs) as service,
        service.http(service.create_key(), 3600) as c,
    ):
        handle, _ = build_and_train(c, first, "low", timeout=3600)
        score(c, handle, texts[-1:])  # the scorer loaded, as a served model's is
        idle_s, status = score(c, handle, texts[:n_texts])
        assert status == 200, status
        beside: list[dict[str, Any]] = []
        other = f"{NAMESPACE}.beside"
        create(c, other, second, second.samples)
        for i in range(repeats):
            run_id = c.post(
                f"/v1/models/{other}/train", json={"effort": effort, "reoptimize_params": True}
            ).json()["run_id"]

            def training() -> bool:
                op = c.get(f"/v1/models/{other}").json().get("last_operation") or {}
                return op.get("status") == "running"

            wait_until(training, 600, "the training beside to start", interval=0.2)
            with building(build) as builder:
                chunk = texts[n_texts * (1 + i) : n_texts * (2 + i)]
                seconds, status = score(c, handle, chunk)
                beside.append(
                    {
                        "seconds": round(seconds, 2),
                        "status": status,
                        "training_still_running": training(),
                        "build_still_running": builder is not None and builder.poll() is None,
                    }
                )
            c.post(f"/v1/models/{other}/runs/{run_id}/cancel")  # measured: its end is not
            wait_until(lambda: not training(), 600, "the training beside to stop", interval=0.5)
    return {
        "embedder": embedder,
        "texts": n_texts,
        "build": build,
        "idle_s": round(idle_s, 2),
        "beside": beside,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.score_beside_work", description=__doc__)
    parser.add_argument("--embedder", default="auto", help="the service's embedder (default: the default's)")
    parser.add_argument("--texts", type=int, default=219, help="texts in the score request")
    parser.add_argument("--build", choices=("e5", "none"), default="e5", help="a graph build beside, or none")
    parser.add_argument("--repeats", type=int, default=2, help="score requests beside work")
    parser.add_argument("--effort", default="high", help="the training beside's effort")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.embedder, args.texts, args.build, args.repeats, args.effort)
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    answered = all(b["status"] == 200 for b in result["beside"])
    return 0 if answered else 1


if __name__ == "__main__":
    sys.exit(main())
