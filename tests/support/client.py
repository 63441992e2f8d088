"""The real service, in-process, for the client tests: the FastAPI app with its worker, reached through the
ASGI test transport (`Service`), its test data, and `FaultInjector`, which wraps that transport to fail a set
number of requests in a chosen way (refused connection, a 5xx or 429 before or after the real server handled
the request, a lost response), so retries are tested against the real server's behaviour.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from core.client import Client
from service.config.settings import Settings
from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.db import transaction

BASE_URL = "http://testserver/v1"
NAMESPACE = "acme"
OTHER_NAMESPACE = "other"

POSITIVE = [
    "Dear Sir or Madam, I am writing to request a copy of the signed agreement.",
    "We would be grateful if you could confirm the meeting at your earliest convenience.",
    "Please find attached the quarterly report for your review.",
    "I remain at your disposal should you require any further information.",
    "Kindly acknowledge receipt of this letter at your convenience.",
    "We respectfully request that the committee reconsider its decision.",
]
NEGATIVE = [
    "hey whats up, u coming tonight?",
    "lol that was wild, gonna grab food brb",
    "nah dude, no way im doing that",
    "yo check this out haha",
    "omg cant believe it, so cool",
    "k see ya later, bring snacks",
]


@dataclass
class Service:
    app_transport: httpx.BaseTransport
    keys: dict[str, str]  # role -> key
    ctx: Any  # service.context.Context, for the executor's test hook
    counter: Iterator[int] = field(default_factory=itertools.count)

    def client(self, role: str = "author", **kwargs: Any) -> Client:
        kwargs.setdefault("transport", self.app_transport)
        kwargs.setdefault("backoff", 0.0)
        return Client(BASE_URL, self.keys.get(role, role), **kwargs)

    def handle(self, prefix: str = "m") -> str:
        return f"{NAMESPACE}.{prefix}-{next(self.counter)}"


def _start(tmp: Path, *, run_worker: bool) -> Iterator[Service]:
    settings = Settings.from_env(data_dir=tmp, embedder="hashing", run_worker=run_worker)
    app = create_app(settings)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        ctx = app.state.ctx
        with transaction(ctx.sessions) as s:
            keys = {
                "author": create_key(s, [NAMESPACE], "authoring"),
                "scorer": create_key(s, [NAMESPACE], "scoring"),
                "outsider": create_key(s, [OTHER_NAMESPACE], "authoring"),
            }
        yield Service(test_client._transport, keys, ctx)


def formality_rows(trait: str = "formality") -> list[dict[str, Any]]:
    return [{"trait": trait, "text": t, "quality": 1.0} for t in POSITIVE] + [
        {"trait": trait, "text": t, "quality": 0.0} for t in NEGATIVE
    ]


def make_draft(client: Client, handle: str, *, samples: bool = True) -> str:
    client.create_model(handle, description="formality test model")
    client.add_traits(handle, [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}])
    if samples:
        client.add_samples(handle, formality_rows())
    return handle


# -- fault injection --------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # connect | status-before | status-after | read-timeout
    status: int = 503
    retry_after: str | None = None
    method: str | None = None
    path: str | None = None
    times: int = 1

    def matches(self, request: httpx.Request) -> bool:
        return (self.method is None or request.method == self.method) and (
            self.path is None or request.url.path.endswith(self.path)
        )


class FaultInjector(httpx.BaseTransport):
    """Forwards to the real transport, except for the faults queued with `inject`."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.faults: list[Fault] = []
        self.seen: list[httpx.Request] = []  # every attempt the client made
        self.forwarded: list[httpx.Request] = []  # attempts that reached the real server

    def inject(self, kind: str, **kwargs: Any) -> None:  # Fault's fields
        self.faults.append(Fault(kind, **kwargs))

    def attempts(self, method: str, path: str) -> list[httpx.Request]:
        return [r for r in self.seen if r.method == method and r.url.path.endswith(path)]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        fault = next((f for f in self.faults if f.times > 0 and f.matches(request)), None)
        if fault is None:
            return self._forward(request)
        fault.times -= 1
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        if fault.kind == "connect":
            raise httpx.ConnectError("injected: connection refused", request=request)
        if fault.kind == "status-before":
            return httpx.Response(fault.status, headers=headers, text="injected", request=request)
        response = self._forward(request)  # the real server handles it; the answer is lost or replaced
        response.read()
        response.close()
        if fault.kind == "read-timeout":
            raise httpx.ReadTimeout("injected: response lost", request=request)
        return httpx.Response(
            fault.status,
            headers=headers,
            json={"error": {"code": "internal_error", "message": "injected"}},
            request=request,
        )

    def _forward(self, request: httpx.Request) -> httpx.Response:
        self.forwarded.append(request)
        return self.inner.handle_request(request)
