"""Scoring is bounded by the work it asks for, not only by its requests: a cap on the characters of one
request, a budget of characters per caller, and work that stops when no one wants it any more (the client
went away, the process is stopping). One service for the module, with a budget that never refills while
the tests run (a character every 1,000 s); each test spends a key of its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.types import Message

from core.client.calls.scoring import score_batches
from core.embedders import CachedEmbedder, cache_key
from service.domain import fair_share
from service.domain.fair_share import pieces
from tests.support.service import Svc, check, error_code, make_model, running, train_ready

HANDLE = "acme.work"
CAP = 600  # characters of one request
BUDGET = 1_000  # characters of a caller's budget


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Svc]:
    with running(
        tmp_path_factory.mktemp("work"),
        score_request_chars=CAP,
        score_chars_burst=BUDGET,
        score_chars_per_s=0.001,
    ) as svc:
        make_model(svc.client, svc.author, HANDLE)
        train_ready(svc.client, svc.author, HANDLE)
        yield svc


def _score(svc: Svc, key: dict[str, str], content: str | list[str]) -> Any:
    return svc.client.post(f"/v1/models/{HANDLE}/score", json={"content": content}, headers=key)


def test_a_request_past_the_cap_is_413_and_a_caller_past_its_budget_429(work: Svc) -> None:
    """One request carrying more characters than the cap is refused 413 `payload_too_large` and charges
    nothing; requests within it are charged their characters until the caller's budget is spent, then 429
    `rate_limited` with Retry-After, for scoring and comparing alike. A colleague's budget is their own."""
    key, colleague = work.key(["acme"], "scoring"), work.key(["acme"], "scoring")
    over = _score(work, key, ["x" * 300, "y" * 301])
    assert error_code(over, 413) == "payload_too_large"
    assert over.json()["error"]["retryable"] is False and "601" in over.json()["error"]["message"]
    assert len(check(_score(work, key, ["a" * 300, "b" * 300]), 200)["results"]) == 2  # 600 of 1,000
    check(_score(work, key, "c" * 400), 200)  # the budget, to the character
    refused = _score(work, key, "Dear Sir")
    assert error_code(refused, 429) == "rate_limited"
    assert refused.json()["error"]["retryable"] is True and int(refused.headers["Retry-After"]) >= 1
    pair = {"a": "hi", "b": "Dear Sir"}
    compared = work.client.post(f"/v1/models/{HANDLE}/score/compare", json=pair, headers=key)
    assert error_code(compared, 429) == "rate_limited"
    check(_score(work, colleague, "Dear Sir"), 200)


def test_the_perspective_surface_spends_the_same_budget(work: Svc) -> None:
    """A Perspective `comments:analyze` is scoring too: its comment's characters come out of the caller's
    budget, so a caller past it through /score is refused there as well (429, in Google's error shape)."""
    key = work.key(["acme"], "scoring")
    check(_score(work, key, "a" * 500), 200)
    check(_score(work, key, "b" * 500), 200)  # the whole budget
    body = {"comment": {"text": "Dear Sir"}, "requestedAttributes": {"TOXICITY": {}}}
    refused = work.client.post("/v1alpha1/comments:analyze", json=body, headers=key)
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert int(refused.headers["Retry-After"]) >= 1


def test_texts_are_scored_in_pieces_by_cost_in_order() -> None:
    """A request's texts go to the embedder in runs of about PIECE_COST (texts and tokens), in order, a text
    never split, so a large request queues one piece at a time."""
    texts = ["a" * 3, "b" * 3, "c" * 5, "d", "e" * 9]  # 17, 17, 18, 17, 19
    assert pieces(texts, 36) == [["aaa", "bbb"], ["ccccc", "d"], ["eeeeeeeee"]]
    assert pieces(["x" * 10], 4) == [["x" * 10]]
    assert pieces([], 4) == []


def test_the_client_splits_score_many_under_the_request_cap() -> None:
    """`score_many` sends at most 100 texts and the cap's characters a request, in order, a longer text
    alone, so long texts meet no 413."""
    texts = ["a" * 40, "b" * 40, "c" * 30, "d" * 90, "e" * 5]
    assert score_batches(texts, 100, 100) == [(0, texts[:2]), (2, texts[2:3]), (3, texts[3:])]
    assert score_batches(texts, 2, 1_000) == [(0, texts[:2]), (2, texts[2:4]), (4, texts[4:])]
    assert score_batches(["x" * 150], 100, 100) == [(0, ["x" * 150])]
    assert score_batches([], 100, 100) == []


def test_a_request_scored_in_pieces_scores_as_one(work: Svc, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring piece by piece changes no score: a list scored in pieces of one text each answers what each
    text scored alone answers."""
    key = work.key(["acme"], "scoring")
    texts = ["Dear Sir, kindly review", "lol yo dude", "Regards, the committee", "sup"]
    alone = [check(_score(work, key, t), 200)["scores"] for t in texts]
    monkeypatch.setattr(fair_share, "PIECE_COST", 1)
    together = check(_score(work, key, texts), 200)["results"]
    assert [r["scores"] for r in together] == alone


def test_a_stopping_process_scores_nothing_more_and_answers_503(work: Svc) -> None:
    """Once the server starts to stop (SIGTERM), a score request scores no further piece and answers a
    retryable 503 `shutting_down`, so the process never waits on queued scoring work."""
    key = work.key(["acme"], "scoring")
    work.app.state.stopping.set()
    try:
        refused = _score(work, key, ["one text", "another"])
    finally:
        work.app.state.stopping.clear()
    assert error_code(refused, 503) == "shutting_down"
    assert refused.json()["error"]["retryable"] is True and refused.headers["Retry-After"] == "1"
    check(_score(work, key, "one text"), 200)


def test_a_client_that_left_stops_its_scoring_after_the_piece_in_hand(
    work: Svc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that disconnects while its texts are scored stops the work at the next piece: the texts
    after the first piece are never embedded, and the request ends 499 `client_closed_request`. Driven at
    the ASGI level: the body arrives, then the disconnect, as a server delivers them."""
    key = work.key(["acme"], "scoring")
    monkeypatch.setattr(fair_share, "PIECE_COST", 1)
    texts = [f"a text nobody waits for, number {i}" for i in range(4)]
    body = json.dumps({"content": texts}).encode()
    incoming: list[Message] = [
        {"type": "http.request", "body": body, "more_body": False},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0) if len(incoming) > 1 else incoming[0]

    async def send(message: Message) -> None:
        sent.append(message)

    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in key.items()]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": f"/v1/models/{HANDLE}/score",
        "raw_path": f"/v1/models/{HANDLE}/score".encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
        "app": work.app,
    }
    asyncio.run(work.app(scope, receive, send))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 499
    embedder = work.ctx.embedders.for_scoring()
    assert isinstance(embedder, CachedEmbedder)
    stored = embedder.store.get_many([cache_key(embedder.id, t) for t in texts])
    assert set(stored) == {cache_key(embedder.id, texts[0])}


def test_a_client_that_left_before_its_body_is_an_info_line(
    work: Svc, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that disconnects while its body is read (a notebook interrupted, a client's timeout) is
    logged as INFO, with no traceback: nothing is wrong with the service, and no one is left to answer."""
    key = work.key(["acme"], "scoring")
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    headers = [(b"content-type", b"application/json"), (b"content-length", b"100")]
    headers += [(k.lower().encode(), v.encode()) for k, v in key.items()]
    path = f"/v1/models/{HANDLE}/score"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
        "app": work.app,
    }
    with caplog.at_level("INFO", logger="service"):
        asyncio.run(work.app(scope, receive, send))
    assert sent == []
    mine = [r for r in caplog.records if r.name == "service" and path in r.getMessage()]
    assert [r.levelname for r in mine] == ["INFO"] and "client left" in mine[0].getMessage()
    assert all(r.exc_info is None for r in mine)
