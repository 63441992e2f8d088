"""Peak resident memory of the API and of its worker while the stored text grows tenfold, every text at the
length limit.

`python -m benchmarks.memory_flat [--texts 40 --scale 10 --chars N]`: for each size (`--texts`, then
`--texts` x `--scale`) a fresh service as `serve` runs it (SQLite, the embedded worker child, default
settings but the per-key rates, which would only slow the client), one model on each embedder of `--embedders`
(e5-small-qint8 and mpnet-base), each given that many labelled samples and as many pool texts of `--chars`
characters (the politeness requests run together, every text distinct). Then, as a team would: the Label
page's suggestion on each model (it reads every label and the pool's vectors), then a training of each
(the worker embeds and fits). A sampler reads both
processes' RSS every 0.1 s; the figures are each phase's peak. Flat means the tenfold size's peaks are
within `--tolerance-mb` of the small size's, both embedders loaded in both processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import RESULTS_DIR, Deployment, build_embedder, deployment
from benchmarks.scale.steps import BatchLog, ok, wait_settled
from core.contract import MAX_TEXT_CHARS

TRAIT = "polite"
BATCH = 50  # texts a request: 1 M characters at the length limit


PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb(pid: int) -> float:
    """A process's resident memory in MiB from /proc (Linux), 0 once it is gone. Not psutil: a Process made
    for a pid that exits meanwhile is left half-built, and its finalizer raises ten times a second."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (the embedded worker and the runs' children), from /proc. Bytes and
    scandir: this reads every process's stat, and Path.glob with read_text cost ~5x the CPU (~50 ms a
    scan beside ~200 processes)."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
            parent = int(stat[stat.rindex(b")") + 2 :].split(b" ", 2)[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(parent, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


class Sampler:
    """The API's and the worker processes' RSS (MiB) every `interval` s, as peaks per phase. A process past
    `limit_mb` is killed (as the kernel would, before it takes the machine's memory) and the phase noted.
    The processes are looked up every `rescan` s, and as soon as one is gone; their RSS read every `interval`
    s: a lookup reads all of /proc, which ten times a second took more CPU than the tiny run it measured."""

    def __init__(self, dep: Deployment, limit_mb: float, interval: float = 0.1, rescan: float = 1.0) -> None:
        self.dep, self.limit_mb, self.interval, self.rescan = dep, limit_mb, interval, rescan
        self.peaks: dict[str, dict[str, float]] = {}
        self.killed_in: str | None = None
        self._phase = "start"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        kids: list[int] = []
        looked = -self.rescan
        while not self._stop.is_set():
            api = rss_mb(self.dep.api_pid)
            sizes = [rss_mb(p) for p in kids]
            if time.monotonic() - looked >= self.rescan or 0.0 in sizes:
                kids, looked = descendants(self.dep.api_pid), time.monotonic()
                sizes = [rss_mb(p) for p in kids]
            worker = max(sizes, default=0.0)
            peak = self.peaks.setdefault(self._phase, {"api_mb": 0.0, "worker_mb": 0.0})
            peak["api_mb"] = max(peak["api_mb"], round(api))
            peak["worker_mb"] = max(peak["worker_mb"], round(worker))
            if max(api, worker) > self.limit_mb and self.killed_in is None:
                self.killed_in = self._phase
                for pid in [*descendants(self.dep.api_pid), self.dep.api_pid]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            self._stop.wait(self.interval)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._phase = name
        time.sleep(2 * self.interval)  # at least one reading of the phase
        yield
        time.sleep(2 * self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def long_text(corpus: Corpus, i: int, chars: int) -> str:
    """Distinct text `i` of exactly `chars` characters: requests i, i+1, … run together."""
    parts, n, j = [f"({i})"], 0, i
    while n < chars:
        parts.append(corpus.texts[j % len(corpus.texts)])
        n += len(parts[-1]) + 1
        j += 1
    return " ".join(parts)[:chars]


def run_size(
    corpus: Corpus, embedders: list[str], n: int, chars: int, args: argparse.Namespace
) -> dict[str, Any]:
    problems: list[str] = []
    with deployment("sqlite", embedders[0], 0) as dep, Sampler(dep, args.limit_mb) as sampler:
        try:
            steps(dep, sampler, corpus, embedders, n, chars, args.timeout)
        except (httpx.HTTPError, RuntimeError) as exc:
            if sampler.killed_in is None:
                raise
            problems.append(f"killed past {args.limit_mb} MB in {sampler.killed_in}: {exc!r}"[:300])
        problems += dep.log_problems()
    peaks = sampler.peaks
    return {
        "texts_per_model": n,
        "stored_chars": 2 * n * chars * len(embedders),
        "api_peak_mb": max(p["api_mb"] for p in peaks.values()),
        "worker_peak_mb": max(p["worker_mb"] for p in peaks.values()),
        "killed_in": sampler.killed_in,
        "phases": peaks,
        "log_problems": problems[:5],
    }


def steps(
    dep: Deployment,
    sampler: Sampler,
    corpus: Corpus,
    embedders: list[str],
    n: int,
    chars: int,
    timeout: float,
) -> None:
    with dep.http(dep.create_key()) as c:
        phases(c, dep, sampler, corpus, embedders, n, chars, timeout)


def phases(
    c: httpx.Client,
    dep: Deployment,
    sampler: Sampler,
    corpus: Corpus,
    embedders: list[str],
    n: int,
    chars: int,
    timeout: float,
) -> None:
    models = [(embedder, f"scale.memory-{i}") for i, embedder in enumerate(embedders)]
    log = BatchLog()
    with sampler.phase("bodies"):  # each embedder loaded in both processes before anything grows
        for embedder, handle in models:
            chosen = {} if embedder == "hashing" else {"embedder": embedder}  # hashing: the service default
            ok(c.post("/models", json={"handle": handle, **chosen}), 201)
            trait = {"name": TRAIT, "positive_label": "polite", "negative_label": "rude"}
            ok(c.post(f"/models/{handle}/traits", json={"traits": [trait]}), 201)
            warm = [{"trait": TRAIT, "text": corpus.text(k), "quality": float(k % 2)} for k in range(4)]
            log.post(dep, c, f"/models/{handle}/samples", {"samples": warm})
            ok(c.post(f"/models/{handle}/pool/suggest", json={"trait": TRAIT, "k": 5}), 200)
            ok(c.post(f"/models/{handle}/train", json={"effort": "low"}), 202)
            wait_settled(c, handle, timeout)
            ok(c.post(f"/models/{handle}/reopen"), 200)  # a draft again: its samples take more
    with sampler.phase("import"):
        for _, handle in models:
            for start in range(0, n, BATCH):
                rows = range(start, min(start + BATCH, n))
                samples = [
                    {"trait": TRAIT, "text": long_text(corpus, i, chars), "quality": corpus.quality(i)}
                    for i in rows
                ]
                log.post(dep, c, f"/models/{handle}/samples", {"samples": samples})
                pool = [long_text(corpus, n + i, chars) for i in rows]
                log.post(dep, c, f"/models/{handle}/pool", {"texts": pool})
    with sampler.phase("suggest"):
        for _, handle in models:
            ok(c.post(f"/models/{handle}/pool/suggest", json={"trait": TRAIT, "k": 10}), 200)
    with sampler.phase("train"):
        for _, handle in models:
            ok(c.post(f"/models/{handle}/train", json={"effort": "low"}), 202)
            model = wait_settled(c, handle, timeout)
            if model["state"] != "ready":
                raise RuntimeError(f"training failed: {json.dumps(model['last_operation'])}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.memory_flat", description=__doc__)
    p.add_argument("--texts", type=int, default=40, help="samples and pool texts a model at the first size")
    p.add_argument("--scale", type=int, default=10, help="the second size, in times the first (1: none)")
    p.add_argument("--chars", type=int, default=MAX_TEXT_CHARS, help="characters a text")
    p.add_argument("--embedders", default="e5-small-qint8,mpnet-base")
    p.add_argument("--corpus", choices=("politeness", "demo"), default="politeness")
    p.add_argument("--tolerance-mb", type=float, default=150.0, help="how far the peaks may move to be flat")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds a training may take")
    p.add_argument("--limit-mb", type=float, default=6000.0, help="a process past it is killed, and noted")
    p.add_argument("--output", type=Path, default=RESULTS_DIR / "memory_flat.json")
    args = p.parse_args(argv)
    embedders = args.embedders.split(",")
    corpus = Corpus.load(args.corpus)
    for embedder in embedders:
        if embedder != "hashing":
            build_embedder(embedder)  # built once, before any measured process starts
    counts = [args.texts] if args.scale == 1 else [args.texts, args.texts * args.scale]  # 1: one size
    sizes = [run_size(corpus, embedders, n, args.chars, args) for n in counts]
    growth = {k: sizes[-1][k] - sizes[0][k] for k in ("api_peak_mb", "worker_peak_mb")}
    result = {
        "bodies": embedders,
        "chars_per_text": args.chars,
        "sizes": sizes,
        "growth_mb": growth,
        "flat": all(abs(v) <= args.tolerance_mb for v in growth.values())
        and not any(size["killed_in"] for size in sizes),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
