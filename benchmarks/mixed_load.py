"""Mixed-client load: `python -m benchmarks.mixed_load [--database sqlite|postgres|both] [--clients 50]
[--duration 30]`.

Starts `python -m service serve` as the embedded setup (one API process, its worker child), trains one
shared model from sample_data/, gives every client a draft model of its own, then runs `--clients` concurrent
clients for `--duration` seconds. Each client draws operations at random (weights in MIX): scoring (a text, a
batch, compare), reads (list and page models, get model, list samples and versions, history, keys), its own
writes (add samples, patch, pool import, suggest, train), tagging the shared model, and hostile requests
answered with their documented refusal (another namespace's key, a scoring key, no key, a forged cursor,
broken JSON). Before drawing, the clients share out every kind once, so that a short run covers them all.

An error is any answer outside the operation's documented statuses (a 5xx, a 503 `database_busy` included) or
no answer at all. Target: 0 errors. Prints a table and writes benchmarks/results/mixed_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.load.fleet import NAMESPACE, running_service
from benchmarks.load.models import build_and_train
from benchmarks.load.texts import demo_slugs, score_texts
from core.demo import read_demo_model
from harness.service import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "mixed_load.json"


@dataclass
class World:
    base: str
    author: dict[str, str]
    scorer: dict[str, str]
    stranger: dict[str, str]
    shared: str  # the trained model every client scores
    traits: list[str]
    texts: list[str]


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    errors: list[str] = field(default_factory=list)


Op = Callable[["Client"], Awaitable[None]]


class Client:
    def __init__(self, i: int, world: World, session: aiohttp.ClientSession, tally: Tally) -> None:
        self.i, self.w, self.session, self.tally = i, world, session, tally
        self.rng = random.Random(i)
        self.own = f"{NAMESPACE}.mixed{i}"

    async def call(
        self,
        name: str,
        method: str,
        path: str,
        expected: Sequence[int],
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        raw: bytes | None = None,
    ) -> Any:
        hdrs = dict(self.w.author if headers is None else headers)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        start = time.perf_counter()
        try:
            async with self.session.request(method, self.w.base + path, data=data, headers=hdrs) as resp:
                payload = await resp.read()
                status = resp.status
        except (TimeoutError, aiohttp.ClientError) as exc:
            self.tally.errors.append(f"{name}: {type(exc).__name__} {exc}")
            return None
        self.tally.latencies[name].append(time.perf_counter() - start)
        self.tally.statuses[name][status] += 1
        if status not in expected:
            self.tally.errors.append(f"{name}: {status} {payload[:300]!r}")
            return None
        return json.loads(payload) if payload else None

    def text(self) -> str:
        return self.rng.choice(self.w.texts)

    # -- scoring
    async def score(self) -> None:
        await self.call(
            "score", "POST", f"/v1/models/{self.w.shared}/score", (200,), body={"content": self.text()}
        )

    async def score_batch(self) -> None:
        body = {"content": [self.text() for _ in range(10)]}
        await self.call("score batch", "POST", f"/v1/models/{self.w.shared}/score", (200,), body=body)

    async def compare(self) -> None:
        body = {"a": self.text(), "b": self.text()}
        await self.call("compare", "POST", f"/v1/models/{self.w.shared}/score/compare", (200,), body=body)

    # -- reads
    async def list_models(self) -> None:
        page = await self.call("list models", "GET", f"/v1/models?namespace={NAMESPACE}&limit=5", (200,))
        if page and page.get("next_cursor"):
            path = f"/v1/models?namespace={NAMESPACE}&limit=5&cursor={page['next_cursor']}"
            await self.call("list models", "GET", path, (200,))

    async def get_model(self) -> None:
        await self.call("get model", "GET", f"/v1/models/{self.w.shared}", (200,))

    async def list_samples(self) -> None:
        await self.call("list samples", "GET", f"/v1/models/{self.w.shared}/samples?limit=50", (200,))

    async def versions(self) -> None:
        await self.call("versions", "GET", f"/v1/models/{self.w.shared}/versions", (200,))
        await self.call("history", "GET", f"/v1/models/{self.w.shared}/history", (200,))

    async def keys(self) -> None:
        await self.call("key info", "GET", "/v1/keys/current", (200,), headers=self.w.scorer)

    # -- own writes: a draft takes samples and edits; a model in training answers 409 model_busy
    async def add_samples(self) -> None:
        rows = [
            {
                "trait": self.rng.choice(self.w.traits),
                "text": f"{self.text()} #{self.i}-{self.rng.random():.9f}",
                "quality": self.rng.choice((0.0, 1.0)),
            }
            for _ in range(5)
        ]
        await self.call(
            "add samples", "POST", f"/v1/models/{self.own}/samples", (201, 409), body={"samples": rows}
        )

    async def patch_model(self) -> None:
        body = {"description": f"edited by client {self.i} at {time.time():.3f}"}
        await self.call("patch model", "PATCH", f"/v1/models/{self.own}", (200, 409), body=body)

    async def pool(self) -> None:
        texts = [self.text() for _ in range(20)]
        await self.call(
            "pool import", "POST", f"/v1/models/{self.own}/pool", (201, 409), body={"texts": texts}
        )
        body = {"trait": self.w.traits[0], "k": 5}
        await self.call("pool suggest", "POST", f"/v1/models/{self.own}/pool/suggest", (200, 409), body=body)

    async def train(self) -> None:
        # 202 started (or joined), 200 no-op on ready, 409 busy or a trait with one pole so far.
        await self.call(
            "train", "POST", f"/v1/models/{self.own}/train", (200, 202, 409, 422), body={"effort": "low"}
        )

    async def tag(self) -> None:
        tag = f"c{self.i}"
        await self.call("tag", "POST", f"/v1/models/{self.w.shared}/versions/{tag}", (200,))
        await self.call("untag", "DELETE", f"/v1/models/{self.w.shared}/versions/{tag}", (200,))

    # -- hostile: each answered with its documented refusal, and nothing changes
    async def hostile(self) -> None:
        shared = f"/v1/models/{self.w.shared}"
        kind = self.rng.randrange(6)
        if kind == 0:
            await self.call(
                "other namespace write",
                "PATCH",
                shared,
                (403, 404),
                headers=self.w.stranger,
                body={"description": "taken over"},
            )
        elif kind == 1:
            await self.call(
                "scoring key write",
                "POST",
                f"{shared}/samples",
                (403,),
                headers=self.w.scorer,
                body={"samples": [{"trait": self.w.traits[0], "text": "x", "quality": 1.0}]},
            )
        elif kind == 2:
            await self.call("no key", "POST", f"{shared}/score", (401,), headers={}, body={"content": "hi"})
        elif kind == 3:
            await self.call("forged cursor", "GET", f"/v1/models?cursor=AAAA.{self.i}", (400,))
        elif kind == 4:
            await self.call("broken JSON", "POST", f"{shared}/score", (422,), raw=b'{"content": ')
        else:
            await self.call(
                "feedback, other key",
                "POST",
                f"{shared}/score",
                (403, 404),
                headers=self.w.stranger,
                body={"content": "hi", "feedback": [{"trait": self.w.traits[0], "quality": 1.0}]},
            )


# (operation, weight): scoring dominates, as it does in production.
MIX: list[tuple[Op, int]] = [
    (Client.score, 30),
    (Client.score_batch, 5),
    (Client.compare, 4),
    (Client.list_models, 5),
    (Client.get_model, 6),
    (Client.list_samples, 3),
    (Client.versions, 3),
    (Client.keys, 2),
    (Client.add_samples, 8),
    (Client.patch_model, 4),
    (Client.pool, 3),
    (Client.train, 1),
    (Client.tag, 2),
    (Client.hostile, 8),
]


async def run_clients(world: World, clients: int, duration: float) -> Tally:
    tally = Tally()
    ops, weights = zip(*MIX, strict=True)
    timeout = aiohttp.ClientTimeout(total=120)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        deadline = time.monotonic() + duration

        async def loop(i: int) -> None:
            client = Client(i, world, session, tally)
            for op in ops[i::clients]:  # every kind at least once, however short or loaded the run
                await op(client)
            while time.monotonic() < deadline:
                await client.rng.choices(ops, weights)[0](client)

        await asyncio.gather(*(loop(i) for i in range(clients)))
    return tally


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def run_one(database: str, args: argparse.Namespace) -> dict[str, Any]:
    model = read_demo_model(demo_slugs()[0])
    # Limits off: the clients share one key, which the default limits would refuse by design (they have
    # their own benchmarks: load's limits-on warm phase, score_limit).
    with running_service(database, args.embedder, start_timeout=args.start_timeout, limits=False) as service:
        base = service.base_urls[0]
        key = service.create_key()
        author = bearer(key)
        with service.http(key) as http:
            shared, _ = build_and_train(http, model, "low", args.train_timeout)
            traits = [t["key"] for t in http.get(f"/v1/models/{shared}/traits").json()["traits"]]
            for i in range(args.clients):
                own = f"{NAMESPACE}.mixed{i}"
                http.post("/v1/models", json={"handle": own}).raise_for_status()
                http.post(f"/v1/models/{own}/traits", json={"traits": model.traits}).raise_for_status()
            before = http.get(f"/v1/models/{shared}").json()
        world = World(
            base,
            author,
            bearer(service.create_key(NAMESPACE, "scoring")),
            bearer(service.create_key("stranger", "authoring")),
            shared,
            traits,
            score_texts(model, 2000),
        )
        started = time.monotonic()
        tally = asyncio.run(run_clients(world, args.clients, args.duration))
        elapsed = time.monotonic() - started
        with service.http(key, timeout=60) as http:
            after = http.get(f"/v1/models/{shared}").json()
    unchanged = all(before[k] == after[k] for k in ("description", "sample_count", "version_no", "state"))
    total = sum(len(v) for v in tally.latencies.values())
    ops = {
        name: {
            "requests": len(lat),
            "p50_ms": round(1000 * statistics.median(lat), 1),
            "p99_ms": round(1000 * sorted(lat)[max(0, int(len(lat) * 0.99) - 1)], 1),
            "statuses": dict(sorted(tally.statuses[name].items())),
        }
        for name, lat in sorted(tally.latencies.items())
    }
    return {
        "database": database,
        "clients": args.clients,
        "duration_s": round(elapsed, 1),
        "embedder": args.embedder,
        "requests": total,
        "req_per_s": round(total / elapsed, 1),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:10],
        "shared_model_unchanged_by_hostile": unchanged,
        "operations": ops,
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
    }


def markdown(runs: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| database | clients | seconds | requests | req/s | errors | hostile left the model unchanged |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['database']} | {r['clients']} | {r['duration_s']} | {r['requests']:,} | "
            f"{r['req_per_s']} | {r['errors']} | {'yes' if r['shared_model_unchanged_by_hostile'] else 'NO'}"
            " |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--start-timeout", type=float, default=180.0)
    p.add_argument("--train-timeout", type=float, default=900.0)
    p.add_argument("--out", type=Path, default=RESULTS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    databases = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    runs = [run_one(db, args) for db in databases]
    print(markdown(runs))
    for r in runs:
        for line in r["first_errors"]:
            print(f"  {r['database']}: {line}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
    return 0 if all(r["errors"] == 0 and r["shared_model_unchanged_by_hostile"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
