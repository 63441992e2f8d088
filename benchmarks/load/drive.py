"""The load generator: concurrent clients scoring one text a request, and what they measured."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import numpy as np

WARMUP_TEXT = "Warm-up request: load the model and open the database connections before timing."


@dataclass
class LoadResult:
    requests: int
    errors: int
    error_kinds: dict[str, int]
    seconds: float
    latencies_ms: list[float]
    cpu_s: float | None = None  # CPU time the service processes used during the phase
    client_cpu_s: float = 0.0  # CPU time of this process (the load generator) during the phase

    def summary(self) -> dict[str, Any]:
        lat = np.array(self.latencies_ms) if self.latencies_ms else np.array([np.nan])
        ok = self.requests - self.errors
        return {
            "requests": self.requests,
            "errors": self.errors,
            "error_kinds": self.error_kinds,
            "seconds": round(self.seconds, 3),
            "throughput_rps": round(ok / self.seconds, 2) if self.seconds else 0.0,
            "p50_ms": round(float(np.percentile(lat, 50)), 2),
            "p99_ms": round(float(np.percentile(lat, 99)), 2),
            "max_ms": round(float(lat.max()), 2),
            "service_cpu_ms_per_request": round(1000 * self.cpu_s / ok, 3) if self.cpu_s and ok else None,
            "client_cpu_ms_per_request": round(1000 * self.client_cpu_s / ok, 3) if ok else None,
        }


async def drive(
    base_urls: Sequence[str],
    key: str | Sequence[str],
    handle: str,
    texts: Sequence[str],
    clients: int,
    max_requests: int,
    max_seconds: float,
    warmup: bool = True,
    cpu_probe: Callable[[], float | None] = lambda: None,
    until: Callable[[], bool] = lambda: False,
) -> LoadResult:
    """`clients` concurrent loops, each sending one request at a time; texts are taken in a fixed cycle.
    They stop after `max_requests`, `max_seconds`, or once `until()` is true.

    The generator shares the machine's cores with the service, so it uses aiohttp: measured here it costs
    about 0.25 ms of CPU a request against httpx's 1.6 ms, CPU the service would otherwise have had.
    Several keys (`key` a list): request i is sent with key i mod their count, as many callers would.
    """
    keys = [key] if isinstance(key, str) else list(key)
    auth = [{"Authorization": f"Bearer {k}"} for k in keys]
    path = f"/v1/models/{handle}/score"
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    next_index = 0
    timeout = aiohttp.ClientTimeout(total=60)
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                aiohttp.ClientSession(
                    base_url=u,
                    timeout=timeout,
                    connector=aiohttp.TCPConnector(limit=clients),
                )
            )
            for u in base_urls
        ]

        async def post(session: aiohttp.ClientSession, text: str, i: int = 0) -> tuple[int, Any]:
            async with session.post(path, json={"content": text}, headers=auth[i % len(auth)]) as resp:
                return resp.status, await resp.json(content_type=None)

        if warmup:  # not timed: open every connection, on a text outside the measured set
            posts = (post(sessions[i % len(sessions)], WARMUP_TEXT, i) for i in range(clients))
            warm = await asyncio.gather(*posts)
            for status, body in warm:
                if status != 200:
                    raise RuntimeError(f"warm-up request -> {status}: {str(body)[:500]}")
        cpu_start, client_cpu = cpu_probe(), time.process_time()
        start = time.perf_counter()
        deadline = start + max_seconds

        async def client_loop(session: aiohttp.ClientSession) -> None:
            nonlocal next_index
            while next_index < max_requests and time.perf_counter() < deadline and not until():
                i = next_index
                text = texts[i % len(texts)]
                next_index += 1
                t0 = time.perf_counter()
                try:
                    status, body = await post(session, text, i)
                    ok = status == 200 and len(body.get("scores", [])) > 0
                    if not ok:
                        errors[f"http_{status}"] += 1
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    errors[type(exc).__name__] += 1
                    ok = False
                if ok:
                    latencies.append((time.perf_counter() - t0) * 1000)

        await asyncio.gather(*(client_loop(sessions[i % len(sessions)]) for i in range(clients)))
        seconds = time.perf_counter() - start
        cpu_end, client_cpu = cpu_probe(), time.process_time() - client_cpu
    cpu = cpu_end - cpu_start if cpu_start is not None and cpu_end is not None else None
    return LoadResult(next_index, sum(errors.values()), dict(errors), seconds, latencies, cpu, client_cpu)


def merged(parts: Sequence[LoadResult]) -> LoadResult:
    """Phases of one configuration taken in turns with another's, as one result."""
    cpus = [p.cpu_s for p in parts]
    errors: Counter[str] = Counter()
    for p in parts:
        errors.update(p.error_kinds)
    return LoadResult(
        sum(p.requests for p in parts),
        sum(p.errors for p in parts),
        dict(errors),
        sum(p.seconds for p in parts),
        [ms for p in parts for ms in p.latencies_ms],
        None if any(c is None for c in cpus) else sum(c for c in cpus if c is not None),
        sum(p.client_cpu_s for p in parts),
    )


class FreshTexts(Sequence[str]):
    """`base` cycled without end, each text made new to the service by a suffix (tag and pass number), so a
    phase of any length scores cold texts only (a plain cycle would be served more and more from the cache)"""

    def __init__(self, base: Sequence[str], tag: str) -> None:
        self.base, self.tag = list(base), tag

    def __len__(self) -> int:
        return 10**9

    def __getitem__(self, i: int) -> str:  # type: ignore[override]  # indexed by int only, never sliced
        n = len(self.base)
        return f"{self.base[i % n]} ({self.tag} {i // n})"
