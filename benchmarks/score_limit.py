"""How exactly one key past the scoring limit is held to it, with the default limits.

`python -m benchmarks.score_limit [--setups sqlite,postgres,postgres+redis] [--seconds 30] [--offered 2]`:
for each setup the service as real processes (hashing embedder, the default settings): `sqlite`, one API
process (the embedded shape: the limit in its memory); `postgres`, two API processes without Redis (each
allows its share, SCORING_API_PROCESSES=2); `postgres+redis`, two API processes with the queue on a
throwaway Redis server (one limit on Redis for both). A model is trained, then one scoring key sends
up to `--offered` times the configured rate for `--seconds` from `--clients` loops (each waits for its last
answer, so no request waits in a queue and the limiter counts it about when it is sent), in turns over the
API processes, scoring one cached text. The figure is the rate answered 200 over the window against the
configured rate (SCORING_SCORE_RATE_PER_S); target: within 5 % on one process, 10 % on a fleet.

Prints a markdown table and writes benchmarks/results/score_limit.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.load.models import build_and_train
from benchmarks.load.texts import demo_slugs
from core.contract import DEFAULT_SCORE_BURST, DEFAULT_SCORE_RATE_PER_S
from core.demo import read_demo_model
from harness.fleet import Fleet, fleet_env
from harness.pgcluster import PgCluster
from harness.redisserver import RedisServer
from harness.service import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "score_limit.json"
NAMESPACE = "bench"
TARGETS = {"sqlite": 0.05, "postgres": 0.10, "postgres+redis": 0.10}  # one process: 5 %; a fleet: 10 %
TEXT = "A text scored again and again: cached, so a request costs the limiter and little else."


@contextlib.contextmanager
def fleet_of(setup: str) -> Iterator[Fleet]:
    with tempfile.TemporaryDirectory(prefix=f"score-limit-{setup}-") as tmp, contextlib.ExitStack() as stack:
        url = stack.enter_context(PgCluster(database="bench")).url if setup != "sqlite" else None
        extra = {}
        if setup.endswith("+redis"):
            redis = RedisServer().start()
            stack.callback(redis.stop)
            extra["SCORING_QUEUE_URL"] = redis.url
        env = fleet_env(Path(tmp), url, "hashing", **extra)
        fleet = Fleet(Path(tmp), env, apis=1 if setup == "sqlite" else 2)
        stack.callback(fleet.stop, 20)
        fleet.ensure_running(180)
        yield fleet


async def flood(
    urls: Sequence[str], key: str, path: str, offered: float, seconds: float, clients: int
) -> list[tuple[float, float, int]]:
    """(sent, answered, status) of every request, in seconds since the first: `clients` loops, each sending
    its next request once its last is answered (so none waits in a queue: a request is counted by the
    limiter about when it is sent), together at most `offered` a second, in turns over `urls`."""
    timeout = aiohttp.ClientTimeout(total=60)
    headers = {"Authorization": f"Bearer {key}"}
    out: list[tuple[float, float, int]] = []
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                aiohttp.ClientSession(base_url=u, headers=headers, timeout=timeout)
            )
            for u in urls
        ]
        start = time.perf_counter()
        slot = 0

        async def loop() -> None:
            nonlocal slot
            while (now := time.perf_counter() - start) < seconds:
                i, slot = slot, slot + 1
                if (wait := i / offered - now) > 0:
                    await asyncio.sleep(wait)
                sent = time.perf_counter() - start
                async with sessions[i % len(sessions)].post(path, json={"content": TEXT}) as resp:
                    await resp.read()
                    out.append((sent, time.perf_counter() - start, resp.status))
                    if resp.status == 429 and not retry_afters:
                        retry_afters.append(int(resp.headers["Retry-After"]))

        await asyncio.gather(*(loop() for _ in range(clients)))
    return out


retry_afters: list[int] = []  # the first 429's Retry-After, of the last flood


def run_setup(setup: str, args: argparse.Namespace) -> dict[str, Any]:
    print(f"[{setup}] starting ...", flush=True)
    with fleet_of(setup) as fleet:
        author = fleet.create_key(NAMESPACE)
        with fleet.client(0, {"Authorization": f"Bearer {author}"}, timeout=120) as c:
            handle, _ = build_and_train(c, read_demo_model(demo_slugs()[0]), "low", 600)
            c.post(f"/v1/models/{handle}/score", json={"content": TEXT}).raise_for_status()  # cached
        key = fleet.create_key(NAMESPACE, "scoring")
        urls = [fleet.url(i) for i in range(len(fleet.apis))]
        offered = args.offered * DEFAULT_SCORE_RATE_PER_S
        print(f"[{setup}] one key at {offered:g}/s for {args.seconds:g} s over {len(urls)} process(es) ...")
        retry_afters.clear()
        seen = asyncio.run(
            flood(urls, key, f"/v1/models/{handle}/score", offered, args.seconds, args.clients)
        )
    # Each request counted at the middle of its round trip (the limiter counts it in between), within the
    # window; a 200 past it is the next window's.
    counted = [
        (status, answered - sent) for sent, answered, status in seen if (sent + answered) / 2 < args.seconds
    ]
    statuses = Counter(status for status, _ in counted)
    trips = sorted(trip for _, trip in counted)
    allowed = statuses[200] / args.seconds
    error = abs(allowed - DEFAULT_SCORE_RATE_PER_S) / DEFAULT_SCORE_RATE_PER_S
    return {
        "setup": setup,
        "api_processes": len(urls),
        "configured_per_s": DEFAULT_SCORE_RATE_PER_S,
        "burst": DEFAULT_SCORE_BURST,
        "offered_per_s": offered,
        "seconds": args.seconds,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "allowed_per_s": round(allowed, 2),
        "error": round(error, 4),
        "sent_per_s": round(len(counted) / args.seconds, 2),
        "first_retry_after_s": retry_afters[0] if retry_afters else None,
        # A request is counted within half its round trip of when the window places it.
        "round_trip_p99_ms": round(1000 * trips[int(0.99 * (len(trips) - 1))], 1),
        "target": TARGETS[setup],
        # The key must have exceeded the limit (else 200s only measure the load it sent).
        "target_met": error <= TARGETS[setup] and set(statuses) <= {200, 429} and statuses[429] > 0,
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    out = [
        "| setup | API procs | sent /s | answered 200 | 429 | allowed /s | configured /s | off by | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        s = r["statuses"]
        out.append(
            f"| {r['setup']} | {r['api_processes']} | {r['sent_per_s']:g} | {s.get('200', 0)} "
            f"| {s.get('429', 0)} | {r['allowed_per_s']:.2f} | {r['configured_per_s']:g} "
            f"| {100 * r['error']:.1f} % "
            f"| ≤ {100 * r['target']:.0f} %: {'met' if r['target_met'] else 'MISSED'} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.score_limit", description=__doc__)
    p.add_argument("--setups", default="sqlite,postgres,postgres+redis")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--offered", type=float, default=2.0, help="times the configured rate the key sends")
    p.add_argument("--clients", type=int, default=8, help="concurrent loops of the one key")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    rows = [run_setup(setup, args) for setup in args.setups.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": rows}, indent=2) + "\n")
    print()
    print(markdown(rows))
    return 0 if all(r["target_met"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
