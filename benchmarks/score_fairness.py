"""Scoring fairness: does one key sending large requests at its limit slow a colleague's small ones?

`python -m benchmarks.score_fairness [--embedder minilm] [--seconds 60] [--colleague-rate 5] [--heavy-clients
4] [--heavy-texts 100] [--heavy-chars 1000] [--budget on,off]`: one API process on SQLite (the embedded shape)
with the default settings, a demo model trained, then for each `--budget` (`on`: the default budget of
characters per key, `off`: SCORING_SCORE_CHARS_PER_S=0 and SCORING_SCORE_REQUEST_CHARS=0, no count of
characters at all; the pieces and turns of service/domain/scoring.py work in both):

- quiet: a colleague's key scores one new text of about 200 characters at a time, `--colleague-rate` a
  second (5: 1,000 characters a second, within its budget), for `--seconds`;
- loaded: the same, while another key sends `--heavy-clients` loops of `--heavy-texts` new texts of
  `--heavy-chars` characters each, every loop waiting `Retry-After` on a 429 (a key held at its limit);
- stop: with the heavy loops' requests in flight, SIGTERM to the API process: the seconds until it exits.

Every text is new, so each is embedded (no cache hit). The figure is the colleague's p50 loaded over quiet;
target: ≤ 1.5 with the budget on. Prints a markdown table and writes benchmarks/results/score_fairness.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks.load.models import build_and_train
from benchmarks.load.texts import demo_slugs
from core.demo import read_demo_model
from harness.fleet import Fleet, fleet_env
from harness.service import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "score_fairness.json"
NAMESPACE = "bench"
TARGET = 1.5  # the colleague's p50 loaded / quiet, budget on
_PHRASE = (
    "the committee kindly asks you to review the attached report before friday lol yo dude thanks a lot "
    "regards dear sir please find enclosed our answer to your letter of last week about the new schedule"
)
WORDS = _PHRASE.split(" ")


def text(seed: int, chars: int) -> str:
    """A new text of about `chars` characters (never seen before: its embedding is not cached)."""
    words = [f"n{seed}"]
    i = seed
    while sum(len(w) + 1 for w in words) < chars:
        i = (i * 1103515245 + 12345) % (1 << 31)
        words.append(WORDS[i % len(WORDS)])
    return " ".join(words)[:chars]


@contextlib.contextmanager
def service(embedder: str, budget: bool) -> Iterator[Fleet]:
    off = {"SCORING_SCORE_CHARS_PER_S": "0", "SCORING_SCORE_REQUEST_CHARS": "0"}
    with tempfile.TemporaryDirectory(prefix="score-fairness-") as tmp:
        env = fleet_env(Path(tmp), None, embedder, TRANSFORMERS_OFFLINE="1", **({} if budget else off))
        fleet = Fleet(Path(tmp), env, apis=1)
        try:
            fleet.ensure_running(300)
            yield fleet
        finally:
            fleet.stop(60)


class Colleague(threading.Thread):
    """One new short text at a time, `rate` a second (or as fast as answered), until stopped: the round
    trips of the 200s, in seconds."""

    def __init__(self, url: str, key: str, path: str, first: int, rate: float) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.path, self.seed, self.rate = url, key, path, first, rate
        self.trips: list[float] = []
        self.statuses: Counter[int] = Counter()
        self.halt = threading.Event()

    def run(self) -> None:
        with httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=300
        ) as c:
            start = time.perf_counter()
            while not self.halt.is_set():
                self.seed += 1
                sent = time.perf_counter()
                resp = c.post(self.path, json={"content": text(self.seed, 200)})
                self.statuses[resp.status_code] += 1
                if resp.status_code == 200:
                    self.trips.append(time.perf_counter() - sent)
                elif resp.status_code == 429:
                    self.halt.wait(float(resp.headers.get("Retry-After", "1")))
                sent_so_far = sum(self.statuses.values())
                self.halt.wait(max(0.0, start + sent_so_far / self.rate - time.perf_counter()))


class Heavy(threading.Thread):
    """Large requests of new texts, one after another, waiting Retry-After on a 429."""

    def __init__(self, url: str, key: str, path: str, first: int, texts: int, chars: int) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.path, self.seed = url, key, path, first
        self.texts, self.chars = texts, chars
        self.statuses: Counter[int] = Counter()
        self.scored_chars = 0
        self.halt = threading.Event()

    def run(self) -> None:
        with httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=600
        ) as c:
            while not self.halt.is_set():
                batch = [text(self.seed + i, self.chars) for i in range(self.texts)]
                self.seed += self.texts
                try:
                    resp = c.post(self.path, json={"content": batch})
                except httpx.HTTPError:  # the process stopped under it (the stop phase)
                    self.statuses[0] += 1
                    return
                self.statuses[resp.status_code] += 1
                if resp.status_code == 200:
                    self.scored_chars += sum(map(len, batch))
                elif resp.status_code == 429:
                    self.halt.wait(float(resp.headers.get("Retry-After", "1")))
                elif resp.status_code == 503:
                    return


def p50(trips: list[float]) -> float:
    return statistics.median(trips) if trips else float("nan")


def run_budget(budget: bool, args: argparse.Namespace) -> dict[str, Any]:
    label = "on" if budget else "off"
    print(f"[budget {label}] starting the service ({args.embedder}) and training ...", flush=True)
    with service(args.embedder, budget) as fleet:
        author = fleet.create_key(NAMESPACE)
        with fleet.client(0, {"Authorization": f"Bearer {author}"}, timeout=600) as c:
            handle, _ = build_and_train(c, read_demo_model(demo_slugs()[0]), "low", 900)
        path = f"/v1/models/{handle}/score"
        url = fleet.url(0)
        colleague_key, heavy_key = (
            fleet.create_key(NAMESPACE, "scoring"),
            fleet.create_key(NAMESPACE, "scoring"),
        )

        with fleet.client(0, {"Authorization": f"Bearer {colleague_key}"}, timeout=600) as c:
            c.post(path, json={"content": "warming up: the scorer loads"}).raise_for_status()
        print(f"[budget {label}] quiet: {args.seconds:g} s ...", flush=True)
        quiet = Colleague(url, colleague_key, path, 1_000_000, args.colleague_rate)
        quiet.start()
        time.sleep(args.seconds)
        quiet.halt.set()
        quiet.join()

        print(
            f"[budget {label}] loaded: {args.heavy_clients} heavy loops, {args.seconds:g} s ...", flush=True
        )
        heavy = [
            Heavy(url, heavy_key, path, 10_000_000 * (i + 1), args.heavy_texts, args.heavy_chars)
            for i in range(args.heavy_clients)
        ]
        for h in heavy:
            h.start()
        time.sleep(2)  # the heavy requests are in flight before the colleague's are timed
        loaded = Colleague(url, colleague_key, path, 2_000_000, args.colleague_rate)
        started = time.perf_counter()
        loaded.start()
        time.sleep(args.seconds)
        loaded.halt.set()
        loaded.join()
        window = time.perf_counter() - started + 2

        print(f"[budget {label}] stop: SIGTERM with the heavy requests in flight ...", flush=True)
        api = fleet.apis[0]
        sent = time.perf_counter()
        api.send_term()
        code = api.wait_exit(600)
        stop_s = time.perf_counter() - sent
        for h in heavy:
            h.halt.set()
        for h in heavy:
            h.join(600)
    statuses: Counter[int] = Counter()
    for h in heavy:
        statuses.update(h.statuses)
    ratio = p50(loaded.trips) / p50(quiet.trips)
    return {
        "budget": label,
        "embedder": args.embedder,
        "quiet_p50_ms": round(1000 * p50(quiet.trips), 1),
        "quiet_requests": len(quiet.trips),
        "loaded_p50_ms": round(1000 * p50(loaded.trips), 1),
        "loaded_requests": len(loaded.trips),
        "colleague_statuses": {str(k): v for k, v in sorted((quiet.statuses + loaded.statuses).items())},
        "p50_ratio": round(ratio, 2),
        "heavy_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "heavy_chars_per_s": round(sum(h.scored_chars for h in heavy) / window),
        "sigterm_to_exit_s": round(stop_s, 1),
        "exit_code": code,
        "target": TARGET if budget else None,
        "target_met": ratio <= TARGET if budget else None,
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| budget | colleague p50 quiet | p50 loaded | ratio | heavy key's statuses | heavy chars/s "
        "| SIGTERM to exit | target |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        target = "" if r["target"] is None else f"≤ {r['target']}: {'met' if r['target_met'] else 'MISSED'}"
        out.append(
            f"| {r['budget']} | {r['quiet_p50_ms']} ms | {r['loaded_p50_ms']} ms | {r['p50_ratio']} "
            f"| {r['heavy_statuses']} | {r['heavy_chars_per_s']:,} | {r['sigterm_to_exit_s']} s | {target} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.score_fairness", description=__doc__)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--seconds", type=float, default=60.0, help="each phase's length")
    p.add_argument(
        "--colleague-rate", type=float, default=5.0, help="the colleague's requests a second (at most)"
    )
    p.add_argument("--heavy-clients", type=int, default=4)
    p.add_argument("--heavy-texts", type=int, default=100)
    p.add_argument("--heavy-chars", type=int, default=1000)
    p.add_argument("--budget", default="on,off", help="on, off or both (on,off)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    rows = [run_budget(b == "on", args) for b in args.budget.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": rows}, indent=2) + "\n")
    print()
    print(markdown(rows))
    return 0 if all(r["target_met"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
