"""Scoring fairness and stop: does a caller alone get the machine, does one caller's load slow a colleague,
and does SIGTERM answer everyone?

`python -m benchmarks.score_fairness [--embedder auto] [--seconds 20] [--lead 2] [--lone-texts 2000]
[--arms fair,off]`: one API process on SQLite (`serve` and its worker child), a demo model trained (by
default as a new model is: `auto`, which trains the blend where mpnet-base is installed), then
per arm (`fair`: the default settings; `off`: the same with `SCORING_SCORE_FAIR_SHARE=0`, every piece
straight to the embedder):

- lone: one key scores `--lone-texts` new texts of ~150 characters in requests of 100, one after another
  (a notebook's `score_many`): texts a second and 429s;
- quiet: a colleague's key scores one new ~200-character text at a time, at most 5 a second, for
  `--seconds`: its median round trip;
- tiny: the same beside another key's 8 loops of 100 new five-character texts a request (started `--lead`
  seconds before the colleague);
- long: the same beside another key's 4 loops of 100 new 1,000-character texts a request;
- stop: SIGTERM with the long loops' requests in flight: seconds until the process is gone, and how the
  requests in flight were answered (a bare text/plain 500, or no answer, counted apart).

Every text is new, so each is embedded. Targets: lone texts/s ≥ 0.9 × the `off` arm's with no 429; the
colleague's median beside each load ≤ 2 × quiet (`fair`); exit ≤ the grace (30 s) + 10 s, every request in
flight answered in the envelope. Prints a markdown table and writes benchmarks/results/score_fairness.json.
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks.load.fleet import built_graphs
from benchmarks.load.models import build_and_train
from benchmarks.load.texts import demo_slugs
from core.demo import read_demo_model
from harness.fleet import Fleet, fleet_env
from harness.service import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "score_fairness.json"
NAMESPACE = "bench"
LONE_RATIO = 0.9  # lone texts/s, fair over off, at least
COLLEAGUE_RATIO = 2.0  # the colleague's median beside a load over quiet, at most
GRACE_S = 30.0  # the default SCORING_SHUTDOWN_GRACE_S
_PHRASE = (
    "the committee kindly asks you to review the attached report before friday lol yo dude thanks a lot "
    "regards dear sir please find enclosed our answer to your letter of last week about the new schedule"
)
WORDS = _PHRASE.split(" ")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def text(seed: int, chars: int) -> str:
    """A new text of about `chars` characters (never seen before: its embedding is not cached)."""
    if chars <= 6:  # a tiny text: the seed itself, in base 36
        out = ""
        while seed:
            seed, d = divmod(seed, 36)
            out = _DIGITS[d] + out
        return out.rjust(chars, "0")[-chars:]
    words = [f"n{seed}"]
    # The length kept as it grows: summed again at each word, a long request's 100 texts took ~0.1 s of the
    # client's interpreter (14x this), its loads' threads queued behind one another for it.
    i, length = seed, len(words[0]) + 1
    while length < chars:
        i = (i * 1103515245 + 12345) % (1 << 31)
        words.append(WORDS[i % len(WORDS)])
        length += len(words[-1]) + 1
    return " ".join(words)[:chars]


@contextlib.contextmanager
def service(embedder: str, fair: bool) -> Iterator[Fleet]:
    with tempfile.TemporaryDirectory(prefix="score-fairness-") as tmp:
        extra: dict[str, str] = {} if fair else {"SCORING_SCORE_FAIR_SHARE": "0"}
        env = fleet_env(Path(tmp), None, embedder, TRANSFORMERS_OFFLINE="1", **built_graphs(), **extra)
        fleet = Fleet(Path(tmp), env, apis=1)
        try:
            fleet.ensure_running(300)
            yield fleet
        finally:
            fleet.stop(60)


def _http(url: str, key: str) -> httpx.Client:
    auth = {"Authorization": f"Bearer {key}"}
    return httpx.Client(base_url=url, headers=auth, timeout=600, trust_env=False)


class Colleague(threading.Thread):
    """One new short text at a time, `rate` a second at most, until stopped (the first whatever the time, so
    a phase has a round trip however busy the machine): the 200s' round trips."""

    def __init__(self, url: str, key: str, path: str, first: int, rate: float = 5.0) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.path, self.seed, self.rate = url, key, path, first, rate
        self.trips: list[float] = []
        self.statuses: Counter[int] = Counter()
        self.halt = threading.Event()

    def run(self) -> None:
        with _http(self.url, self.key) as c:
            start = time.perf_counter()
            while True:
                self.seed += 1
                sent = time.perf_counter()
                resp = c.post(self.path, json={"content": text(self.seed, 200)})
                self.statuses[resp.status_code] += 1
                if resp.status_code == 200:
                    self.trips.append(time.perf_counter() - sent)
                done = sum(self.statuses.values())
                if self.halt.wait(max(0.0, start + done / self.rate - time.perf_counter())):
                    return


class Heavy(threading.Thread):
    """Requests of `texts` new texts of `chars` characters, one after another, until stopped."""

    def __init__(self, url: str, key: str, path: str, first: int, texts: int, chars: int) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.path, self.seed = url, key, path, first
        self.texts, self.chars = texts, chars
        self.statuses: Counter[str] = Counter()  # "200", "503 shutting_down", "500 text/plain", "dropped"
        self.scored = 0
        self.halt = threading.Event()

    def run(self) -> None:
        with _http(self.url, self.key) as c:
            while not self.halt.is_set():
                batch = [text(self.seed + i, self.chars) for i in range(self.texts)]
                self.seed += self.texts
                try:
                    resp = c.post(self.path, json={"content": batch})
                except httpx.ConnectError:  # sent after the stop closed the socket: never in flight
                    self.statuses["not accepted"] += 1
                    return
                except httpx.HTTPError:  # in flight, and no answer
                    self.statuses["dropped"] += 1
                    return
                self.statuses[answer(resp)] += 1
                if resp.status_code == 200:
                    self.scored += len(batch)
                elif resp.status_code == 503:
                    return
                elif resp.status_code == 429:
                    self.halt.wait(float(resp.headers.get("Retry-After", "1")))


def answer(resp: httpx.Response) -> str:
    """A status, with the envelope's code for an error (or `text/plain` for an answer outside it)."""
    if resp.status_code < 300:
        return str(resp.status_code)
    if not resp.headers.get("content-type", "").startswith("application/json"):
        return f"{resp.status_code} text/plain"
    return f"{resp.status_code} {resp.json().get('error', {}).get('code')}"


def p50(trips: list[float]) -> float:
    return statistics.median(trips) if trips else float("nan")


def lone(url: str, key: str, path: str, texts: int) -> dict[str, Any]:
    """One caller scoring `texts` new texts in requests of 100, one after another."""
    statuses: Counter[int] = Counter()
    done, seed = 0, 50_000_000
    started = time.perf_counter()
    with _http(url, key) as c:
        while done < texts:
            batch = [text(seed + i, 150) for i in range(min(100, texts - done))]
            resp = c.post(path, json={"content": batch})
            statuses[resp.status_code] += 1
            if resp.status_code == 429:
                time.sleep(float(resp.headers.get("Retry-After", "1")))
                continue
            resp.raise_for_status()
            done += len(batch)
            seed += len(batch)
    took = time.perf_counter() - started
    return {"texts_per_s": round(texts / took, 1), "seconds": round(took, 1), "429s": statuses[429]}


def beside(
    url: str,
    keys: tuple[str, str],
    path: str,
    seconds: float,
    load: Callable[[], list[Heavy]] | None,
    lead: float = 2.0,
) -> tuple[Colleague, list[Heavy]]:
    """The colleague's round trips for `seconds`, beside `load` (None: quiet) started `lead` seconds before
    (so that it is in flight before the colleague is timed); the load is left running."""
    heavy = load() if load else []
    for h in heavy:
        h.start()
    if heavy:
        time.sleep(lead)
    colleague = Colleague(url, keys[0], path, 1_000_000 * (3 + len(heavy)))
    colleague.start()
    time.sleep(seconds)
    colleague.halt.set()
    colleague.join()
    return colleague, heavy


def run_arm(fair: bool, args: argparse.Namespace) -> dict[str, Any]:
    label = "fair" if fair else "off"
    print(f"[{label}] starting the service ({args.embedder}) and training ...", flush=True)
    with service(args.embedder, fair) as fleet:
        author = fleet.create_key(NAMESPACE)
        with fleet.client(0, {"Authorization": f"Bearer {author}"}, timeout=600) as c:
            handle, version = build_and_train(c, read_demo_model(demo_slugs()[0]), "low", 900)
        path, url = f"/v1/models/{handle}/score", fleet.url(0)
        keys = (fleet.create_key(NAMESPACE, "scoring"), fleet.create_key(NAMESPACE, "scoring"))
        with _http(url, keys[0]) as c:
            c.post(path, json={"content": "warming up: the scorer loads"}).raise_for_status()

        print(f"[{label}] lone: {args.lone_texts} texts ...", flush=True)
        alone = lone(url, keys[1], path, args.lone_texts)
        print(f"[{label}] quiet, tiny, long: {args.seconds:g} s each ...", flush=True)
        quiet, _ = beside(url, keys, path, args.seconds, None)

        def tiny() -> list[Heavy]:
            return [Heavy(url, keys[1], path, 100_000_000 * (i + 1), 100, 5) for i in range(8)]

        def long() -> list[Heavy]:
            return [Heavy(url, keys[1], path, 2_000_000_000 + 10_000_000 * i, 100, 1000) for i in range(4)]

        small, tiny_load = beside(url, keys, path, args.seconds, tiny, args.lead)
        for h in tiny_load:
            h.halt.set()
        for h in tiny_load:
            h.join(600)
        large, long_load = beside(url, keys, path, args.seconds, long, args.lead)

        print(f"[{label}] stop: SIGTERM with the long requests in flight ...", flush=True)
        api = fleet.apis[0]
        sent = time.perf_counter()
        api.send_term()
        code = api.wait_exit(GRACE_S + 60)
        stop_s = time.perf_counter() - sent
        for h in long_load:
            h.halt.set()
        for h in long_load:
            h.join(600)
    at_stop: Counter[str] = Counter()
    for h in long_load:
        at_stop.update(h.statuses)
    q = p50(quiet.trips)
    tiny_ratio, long_ratio = p50(small.trips) / q, p50(large.trips) / q
    return {
        "arm": label,
        "embedder": args.embedder,
        "trained_on": (version.get("embedder") or version.get("body") or {}).get("embedder"),
        "lone": alone,
        "quiet_p50_ms": round(1000 * q, 1),
        "tiny_p50_ms": round(1000 * p50(small.trips), 1),
        "tiny_ratio": round(tiny_ratio, 2),
        "tiny_load_texts_per_s": round(sum(h.scored for h in tiny_load) / (args.seconds + args.lead), 1),
        "long_p50_ms": round(1000 * p50(large.trips), 1),
        "long_ratio": round(long_ratio, 2),
        "colleague_statuses": {
            str(k): v for k, v in sorted((quiet.statuses + small.statuses + large.statuses).items())
        },
        "long_load_answers": dict(sorted(at_stop.items())),
        "unanswered": sum(v for k, v in at_stop.items() if k.endswith("text/plain") or k == "dropped"),
        "sigterm_to_exit_s": round(stop_s, 1),
        "exit_code": code,
    }


def judge(rows: list[dict[str, Any]]) -> dict[str, bool]:
    """The targets, over the arms run (the lone ratio needs both)."""
    by = {r["arm"]: r for r in rows}
    out: dict[str, bool] = {}
    if "fair" in by and "off" in by:
        out["lone"] = by["fair"]["lone"]["texts_per_s"] >= LONE_RATIO * by["off"]["lone"]["texts_per_s"]
    if "fair" in by:
        f = by["fair"]
        out["no 429 alone"] = f["lone"]["429s"] == 0
        out["colleague"] = f["tiny_ratio"] <= COLLEAGUE_RATIO and f["long_ratio"] <= COLLEAGUE_RATIO
    out["stop"] = all(r["sigterm_to_exit_s"] <= GRACE_S + 10 and r["unanswered"] == 0 for r in rows)
    return out


def markdown(rows: list[dict[str, Any]], met: dict[str, bool]) -> str:
    out = [
        "| arm | lone texts/s (429s) | colleague p50 quiet | beside tiny (×) | beside long (×) "
        "| long requests at SIGTERM | SIGTERM to exit |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['arm']} | {r['lone']['texts_per_s']} ({r['lone']['429s']}) | {r['quiet_p50_ms']} ms "
            f"| {r['tiny_p50_ms']} ms ({r['tiny_ratio']}) | {r['long_p50_ms']} ms ({r['long_ratio']}) "
            f"| {r['long_load_answers']} | {r['sigterm_to_exit_s']} s |"
        )
    out.append("")
    out.append("Targets: " + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in met.items()))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.score_fairness", description=__doc__)
    p.add_argument("--embedder", default="auto")
    p.add_argument("--seconds", type=float, default=20.0, help="each colleague phase's length")
    p.add_argument(
        "--lead", type=float, default=2.0, help="seconds a load runs before the colleague beside it starts"
    )
    p.add_argument("--lone-texts", type=int, default=2000)
    p.add_argument("--arms", default="fair,off", help="fair, off or both (fair,off)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    rows = [run_arm(a == "fair", args) for a in args.arms.split(",")]
    met = judge(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": rows, "targets_met": met}, indent=2) + "\n")
    print()
    print(markdown(rows, met))
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
