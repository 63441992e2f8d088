"""Suggestions end when no one wants them and a caller's concurrent heavy requests (suggestions, listings)
are bounded, served by uvicorn on loopback. No clock: the test holds scoring's slots itself (as
tests/service/test_shutdown_answers.py does), so a suggestion that must embed texts waits for a turn, in
flight, for as long as the test likes. No worker: the pool's texts stay unembedded, so every suggestion has
embedding to do."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from urllib.parse import urlsplit

import httpx
import pytest

from harness.waiting import wait_until
from service.domain.pool_index import cached
from tests.support.service import Svc, check, error_code, loopback, make_model, running

HANDLE = "acme.heavy"
POOL = [f"a pool text nobody has embedded yet, number {i}" for i in range(6)]
ASK = {"trait": "formality", "k": 2}
LISTINGS = ("my-labels", "votes", "samples", "pool")


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Svc]:
    with running(tmp_path_factory.mktemp("heavy"), run_worker=False) as svc:
        make_model(svc.client, svc.author, HANDLE)  # a draft: suggestions fit on its samples
        check(svc.client.post(f"/v1/models/{HANDLE}/pool", json={"texts": POOL}, headers=svc.author), 201)
        yield svc


@contextmanager
def slots_held(svc: Svc) -> Iterator[None]:
    """Every scoring slot taken by the test: a piece of embedding waits for its turn until the block ends."""
    share = svc.app.state.share
    with ExitStack() as stack:
        for _ in range(share.slots):
            stack.enter_context(share.turn("holder", 1))
        yield


def _waiting(svc: Svc, n: int) -> None:
    wait_until(lambda: svc.app.state.share.state()[1] == n, 60, f"{n} piece(s) waiting for a turn")


def _suggest(base: str, key: dict[str, str], out: list[httpx.Response]) -> threading.Thread:
    def post() -> None:
        with httpx.Client(base_url=base, headers=key, timeout=120, trust_env=False) as c:
            out.append(c.post(f"/v1/models/{HANDLE}/pool/suggest", json=ASK))

    thread = threading.Thread(target=post)
    thread.start()
    return thread


def test_a_suggestion_whose_client_left_stops_and_embeds_nothing(heavy: Svc) -> None:
    """A client that sends a suggestion and leaves while it waits for its turn to embed: the request ends
    (its piece leaves the queue, its caller has nothing in flight) and, once the cores are free again,
    nothing of its work is done: no pool text gets a vector."""
    with loopback(heavy) as base, slots_held(heavy):
        url = urlsplit(base)
        body = json.dumps(ASK).encode()
        head = (
            f"POST /v1/models/{HANDLE}/pool/suggest HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: {heavy.author['Authorization']}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection((url.hostname, url.port)) as client:
            client.sendall(head.encode() + body)
            _waiting(heavy, 1)
        _waiting(heavy, 0)  # asked between polls whether it is still wanted: it is not
        wait_until(lambda: not heavy.app.state.heavy.others_busy("nobody"), 60, "the request to end")
    _, found = cached(heavy.ctx.embedders.get("hashing"), POOL)
    assert not found.any()


def test_a_callers_concurrent_suggestions_are_bounded_while_others_have_theirs(heavy: Svc) -> None:
    """Alone, a caller's suggestions are all admitted, past the bound too; once a colleague has one in
    flight, the caller's next one past the bound is refused 429 `rate_limited` in the envelope with
    Retry-After, at once; the colleague is admitted. Every admitted one answers once the cores are free."""
    bound = heavy.ctx.settings.heavy_per_caller
    me, colleague = heavy.key(["acme"], "authoring"), heavy.key(["acme"], "authoring")
    answers: list[httpx.Response] = []
    with loopback(heavy) as base:
        with slots_held(heavy):
            threads = []
            for n in range(bound + 1):  # alone: never refused
                threads.append(_suggest(base, me, answers))
                _waiting(heavy, n + 1)
            threads.append(_suggest(base, colleague, answers))
            _waiting(heavy, bound + 2)
            with httpx.Client(base_url=base, headers=me, timeout=120, trust_env=False) as c:
                refused = c.post(f"/v1/models/{HANDLE}/pool/suggest", json=ASK)
                # Listings that may read a caller's every row are heavy too: refused alike, nothing read.
                listed = {path: c.get(f"/v1/models/{HANDLE}/{path}") for path in LISTINGS}
            with httpx.Client(base_url=base, headers=colleague, timeout=120, trust_env=False) as c:
                theirs = {path: c.get(f"/v1/models/{HANDLE}/{path}").status_code for path in LISTINGS}
        for thread in threads:
            thread.join(120)
    assert {path: error_code(answer, 429) for path, answer in listed.items()} == dict.fromkeys(
        LISTINGS, "rate_limited"
    )
    assert theirs == dict.fromkeys(LISTINGS, 200)  # one in flight, under the bound: admitted
    assert error_code(refused, 429) == "rate_limited"
    assert refused.json()["error"]["retryable"] is True and int(refused.headers["Retry-After"]) >= 1
    assert [r.status_code for r in answers] == [200] * (bound + 2)
