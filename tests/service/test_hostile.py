"""Hostile input: every item answered in the error envelope, before any harm, on both databases."""

from __future__ import annotations

import json
import logging
import re
import socket
import sqlite3
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError

from harness.ports import free_port
from harness.waiting import wait_until
from service.errors import MAX_BODY_BYTES
from service.store.db import transaction
from service.store.tables import Model, SampleRow, Tag, Trait, utcnow
from tests.service.conftest import Svc, running
from tests.service.helpers import check, error_code, make_model, train_ready

MARKER = "hostile-marker-5c1e"
# Every operation that takes a JSON body, with a path that exists once `acme.h` has data.
BODY_ROUTES = [
    ("POST", "/v1/models"),
    ("PATCH", "/v1/models/acme.h"),
    ("POST", "/v1/models/acme.h/traits"),
    ("PATCH", "/v1/models/acme.h/traits/formality"),
    ("POST", "/v1/models/acme.h/samples"),
    ("POST", "/v1/models/acme.h/train"),
    ("POST", "/v1/models/acme.h/traits/discover"),
    ("POST", "/v1/models/acme.h/samples/synthesize"),
    ("POST", "/v1/models/acme.h/score"),
    ("POST", "/v1/models/acme.h/score/compare"),
]


@contextmanager
def over_http(app: FastAPI) -> Iterator[tuple[str, int]]:
    """The running app (its context already started) served by uvicorn on loopback, for raw sockets."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 30, "uvicorn to start", interval=0.02)
    try:
        yield "127.0.0.1", port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length]


def _chunked_request(address: tuple[str, int], path: str, headers: dict[str, str], body_mib: int) -> Any:
    """POST a chunked body (no Content-Length) of `body_mib` MiB, stopping as soon as the server answers.
    Returns (status, headers, body, bytes sent)."""
    import select as select_module

    with socket.create_connection(address, timeout=30) as sock:
        lines = [f"POST {path} HTTP/1.1", "Host: localhost", "Content-Type: application/json"]
        lines += ["Transfer-Encoding: chunked", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        chunk = b"a" * (1024 * 1024)
        sent = 0
        sock.settimeout(5)  # a server that stopped reading shows as a send that cannot complete
        for _ in range(body_mib):
            if select_module.select([sock], [], [], 0)[0]:
                break  # the server has answered
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
            sent += len(chunk)
        else:
            sock.sendall(b"0\r\n\r\n")
        sock.settimeout(30)
        status, resp_headers, body = _read_response(sock)
    return status, resp_headers, json.loads(body), sent


def _envelope(body: dict[str, Any], headers: dict[str, str], code: str) -> None:
    assert body["error"]["code"] == code, body
    assert body["error"]["request_id"] == headers["x-request-id"]


# ---- 1 and 6: the key before the body, and a limit that holds while streaming ------------------------


def test_key_checked_before_the_body_and_limit_holds_while_streaming(svc: Svc) -> None:
    check(svc.client.post("/v1/models", json={"handle": "acme.h"}, headers=svc.author), 201)
    with over_http(svc.app) as address:
        path = "/v1/models/acme.h/score"
        # No key, and a key of the right shape that does not exist: 401 before one body byte is sent.
        missing_key = _chunked_request(address, path, {}, 0)
        unknown = "sk_000000000000_" + "x" * 43
        unknown_key = _chunked_request(address, path, {"Authorization": f"Bearer {unknown}"}, 0)
        for status, headers, body, sent in (missing_key, unknown_key):
            assert (status, sent) == (401, 0)
            _envelope(body, headers, "unauthorized")
        # A valid key and a 64 MiB chunked body: 413 once the limit is passed, not after reading it all.
        status, headers, body, sent = _chunked_request(address, path, svc.author, 64)
        assert status == 413
        _envelope(body, headers, "payload_too_large")
        assert sent <= MAX_BODY_BYTES + 8 * 1024 * 1024  # what the socket buffers took before the answer
        # A body under the limit still reaches the route.
        status, headers, body, _ = _chunked_request(address, path, svc.author, 1)
        assert status == 422 and body["error"]["code"] == "validation_error"


def _concrete(template: str) -> str:
    """An OpenAPI path template with a value in each placeholder (ids are numbers, as their routes take)."""
    values = {
        "handle": "acme.h",
        "key": "formality",
        "ref": "prod",
        "trait": "formality",
        "namespace": "acme",
        "member": "pat@example.com",
    }
    return re.sub(
        r"\{([a-z_]+)\}", lambda m: "7" if m.group(1).endswith("_id") else values[m.group(1)], template
    )


def test_anonymous_requests_get_401_before_any_body_validation(svc: Svc) -> None:
    """Every operation of the OpenAPI document, no key, a broken JSON body: 401, never 422."""
    paths = check(svc.client.get("/v1/openapi.json"), 200)["paths"]
    checked = 0
    for template, operations in paths.items():
        if not template.startswith("/v1/"):
            continue  # Perspective's surface answers in Google's error shape (test_perspective.py)
        path = _concrete(template)
        for method in operations:
            resp = svc.client.request(
                method.upper(), path, content=b'{"broken', headers={"Content-Type": "application/json"}
            )
            if path == "/v1/health":
                continue
            assert error_code(resp, 401) == "unauthorized", (method, path)
            assert resp.headers["WWW-Authenticate"] == "Bearer"
            checked += 1
    assert checked >= 18


# ---- 2: deeply nested JSON ---------------------------------------------------------------------------


def test_deeply_nested_json_is_422_on_every_route(svc: Svc) -> None:
    make_model(svc.client, svc.author, "acme.h")
    train_ready(svc.client, svc.author, "acme.h")
    deep = b"[" * 10_000 + b"]" * 10_000
    deep_object = b'{"content":' * 5_000 + b'"x"' + b"}" * 5_000
    for method, path in BODY_ROUTES:
        for body in (deep, deep_object):
            resp = svc.client.request(
                method, path, content=body, headers={**svc.author, "Content-Type": "application/json"}
            )
            assert error_code(resp, 422) == "validation_error", (method, path, resp.text[:300])


# ---- 3: NUL bytes and lone surrogates ----------------------------------------------------------------


def test_nul_and_lone_surrogates_are_422_naming_the_field_on_both_databases(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.h")
    bad_values = ["a\x00b", "a\ud800b"]
    for bad in bad_values:
        cases: list[tuple[str, str, dict[str, Any], list[Any]]] = [
            ("POST", "/v1/models", {"handle": "acme.nul", "description": bad}, ["body", "description"]),
            ("PATCH", "/v1/models/acme.h", {"readme_markdown": bad}, ["body", "readme_markdown"]),
            (
                "POST",
                "/v1/models/acme.h/traits",
                {"traits": [{"name": "T", "positive_label": bad, "negative_label": "n"}]},
                ["body", "traits", 0, "positive_label"],
            ),
            ("PATCH", "/v1/models/acme.h/traits/formality", {"description": bad}, ["body", "description"]),
            (
                "POST",
                "/v1/models/acme.h/samples",
                {"samples": [{"trait": "formality", "text": bad, "quality": 1}]},
                ["body", "samples", 0, "text"],
            ),
            (
                "POST",
                "/v1/models/acme.h/samples",
                {"samples": [{"trait": "formality", "text": "ok", "quality": 1, "source_url": bad}]},
                ["body", "samples", 0, "source_url"],
            ),
            ("POST", "/v1/models/acme.h/score/compare", {"a": bad, "b": "x"}, ["body", "a"]),
        ]
        for method, path, body, loc in cases:
            # json.dumps escapes a lone surrogate as \\ud800 (valid JSON, which httpx's json= refuses to send)
            data = json.dumps(body).encode()
            resp = c.request(method, path, content=data, headers={**h, "Content-Type": "application/json"})
            assert error_code(resp, 422) == "validation_error", (path, body)
            assert resp.json()["error"]["details"][0]["loc"] == loc
            assert ".".join(map(str, loc)) in resp.json()["error"]["message"]
    with transaction(svc.ctx.reads) as s:
        assert s.scalar(select(Model.id).where(Model.handle == "acme.nul")) is None
        texts = s.scalars(select(SampleRow.text)).all()
        assert not any("\x00" in t or t == "ok" for t in texts)
        assert s.scalar(select(func.count()).select_from(Trait).where(Trait.name == "T")) == 0
    # Scoring: a JSON content (with feedback), a raw text body, and NUL in the path or the query.
    train_ready(c, h, "acme.h")
    for bad in bad_values:
        feedback = {"content": bad, "feedback": [{"trait": "formality", "quality": 1}]}
        resp = c.post("/v1/models/acme.h/score", content=json.dumps(feedback).encode(), headers=h)
        assert error_code(resp, 422) == "validation_error"
        assert resp.json()["error"]["details"][0]["loc"] == ["body", "content"]
    # Invalid UTF-8 in a raw body.
    raw = c.post("/v1/models/acme.h/score", content=b"a\xffb", headers={**h, "Content-Type": "text/plain"})
    assert error_code(raw, 422) == "validation_error"
    raw = c.post("/v1/models/acme.h/score", content=b"a\x00b", headers={**h, "Content-Type": "text/plain"})
    assert error_code(raw, 422) == "validation_error" and raw.json()["error"]["details"][0]["loc"] == ["body"]
    query = c.get("/v1/models", params={"namespace": "ac\x00me"}, headers=h)
    assert error_code(query, 422) == "validation_error"
    assert query.json()["error"]["details"][0]["loc"] == ["query", "namespace"]
    assert error_code(c.get("/v1/models/acme.h%00/traits", headers=h), 422) == "validation_error"
    assert error_code(c.get("/v1/models/acme.h/versions/p%00", headers=h), 422) == "validation_error"
    with transaction(svc.ctx.reads) as s:
        assert not s.scalars(select(SampleRow.id).where(SampleRow.provenance == "feedback")).all()


# ---- 4: the explain cap ------------------------------------------------------------------------------


def test_explain_is_one_content_per_request(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.h")
    train_ready(c, h, "acme.h")
    resp = c.post(
        "/v1/models/acme.h/score", json={"content": ["one text", "two"], "explain": True}, headers=h
    )
    assert error_code(resp, 422) == "validation_error"
    assert resp.json()["error"]["details"][0]["loc"] == ["body", "explain"]
    one = check(
        c.post("/v1/models/acme.h/score", json={"content": ["one text"], "explain": True}, headers=h), 200
    )
    assert set(one["results"][0]["explanation"]) == {"formality", "sentiment"}
    many = check(c.post("/v1/models/acme.h/score", json={"content": ["one text", "two"]}, headers=h), 200)
    assert len(many["results"]) == 2 and "explanation" not in many["results"][0]


def test_no_explanation_is_computed_for_a_client_that_went_away(
    svc: Svc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app called as the server would: the body arrives, then the client disconnects. The scores are
    computed, the explanation (the costly part) is not: the answer is 499, nobody is there to read it."""
    import anyio

    c, h = svc.client, svc.author
    make_model(c, h, "acme.h")
    train_ready(c, h, "acme.h")
    explained: list[str] = []
    from service.routes import score as score_route

    real_explain = score_route._explain

    def counting_explain(scorer: Any, text: str) -> Any:
        explained.append(text)
        return real_explain(scorer, text)

    body = json.dumps({"content": "Dear Sir, kind regards.", "explain": True}).encode()

    async def call(gone: bool) -> list[MutableMapping[str, Any]]:
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        if gone:
            messages.append({"type": "http.disconnect"})

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await anyio.sleep_forever()  # a client still there sends nothing more
            raise AssertionError

        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        headers = [(k.lower().encode(), v.encode()) for k, v in h.items()]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/v1/models/acme.h/score", "raw_path": b"/v1/models/acme.h/score",
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1), "server": ("testserver", 80),
            "headers": [*headers, (b"content-type", b"application/json")], "app": svc.app,
        }  # fmt: skip
        await svc.app(scope, receive, send)
        return sent

    monkeypatch.setattr(score_route, "_explain", counting_explain)
    there = anyio.run(call, False)
    assert there[0]["status"] == 200 and explained == ["Dear Sir, kind regards."]
    gone = anyio.run(call, True)
    assert gone[0]["status"] == 499 and explained == ["Dear Sir, kind regards."]


# ---- 5: whole-string patterns ------------------------------------------------------------------------


def test_handles_tags_and_version_refs_match_whole_strings_with_ascii_digits(svc: Svc) -> None:
    c, h = svc.client, svc.author
    for handle in ("acme.tone\n", "acme.tone\r\n", "acme.t\u0661", "acme.tone ", "../acme.tone"):
        assert error_code(c.post("/v1/models", json={"handle": handle}, headers=h), 422) == "validation_error"
    make_model(c, h, "acme.tone")
    train_ready(c, h, "acme.tone")
    for tag in ("prod%0A", "V1", "v2", "V12", ".x", "-x", "pr%C3%B6d", "x" * 65):
        resp = c.post(f"/v1/models/acme.tone/versions/{tag}", headers=h)
        assert error_code(resp, 422) == "invalid_tag", tag
    # `../` in a path never reaches a route with the dots: the path no longer names one.
    assert error_code(c.post("/v1/models/acme.tone/versions/..%2F..", headers=h), 404) == "not_found"
    check(c.post("/v1/models/acme.tone/versions/prod", headers=h), 200)
    assert check(c.get("/v1/models/acme.tone/versions/v1", headers=h), 200)["version_no"] == 1
    for ref in ("v\u0661", "v1%0A", "prod%0A", "V1", "v\uff11"):
        assert (
            error_code(c.get(f"/v1/models/acme.tone/versions/{ref}", headers=h), 404) == "version_not_found"
        )
        resp = c.post("/v1/models/acme.tone/score", json={"content": "hello", "version": ref}, headers=h)
        assert error_code(resp, 404) == "version_not_found", ref
    assert error_code(c.get("/v1/models/acme.tone%0A", headers=h), 404) == "model_not_found"
    with transaction(svc.ctx.reads) as s:
        assert s.scalars(select(Model.handle)).all() == ["acme.tone"]
        assert s.scalars(select(Tag.name)).all() == ["prod"]


# ---- 7 and 9: 405 Allow, and no redirect built from the Host header -----------------------------------


def test_405_allow_names_every_method_of_the_path(svc: Svc) -> None:
    paths = check(svc.client.get("/v1/openapi.json"), 200)["paths"]
    checked = 0
    for template in paths:
        if template == "/v1/health" or template == "/v1/openapi.json":
            continue
        path = _concrete(template)
        # Every template the path matches (…/traits/discover is also …/traits/{key}) adds its methods; an id
        # matches digits only (…/samples/synthesize is not …/samples/{sample_id}).
        expected = {
            m.upper()
            for other, ops in paths.items()
            if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", re.sub(r"\{[a-z]+_id\}", "[0-9]+", other)), path)
            for m in ops
        }
        for method in {"OPTIONS", "PUT", "PATCH", "DELETE", "POST", "GET"} - expected:
            resp = svc.client.request(method, path, headers=svc.author)
            assert error_code(resp, 405) == "method_not_allowed", (method, path)
            assert {m.strip() for m in resp.headers["Allow"].split(",")} == expected, (method, path)
            checked += 1
    resp = svc.client.options("/v1/models", headers=svc.author)
    assert resp.headers["Allow"] == "GET, POST"
    assert checked >= 30


def test_trailing_slash_is_404_not_a_redirect_to_the_host_header(svc: Svc) -> None:
    h = {**svc.author, "Host": "evil.example"}
    for method, path in (
        ("POST", "/v1/models/acme.x/versions/"),
        ("GET", "/v1/models/"),
        ("GET", "/v1/health/"),
    ):
        resp = svc.client.request(method, path, headers=h, follow_redirects=False)
        assert error_code(resp, 404) == "not_found", (method, path)
        assert "location" not in resp.headers


# ---- 8 and 10: lock timeouts are 503, and database errors never carry bound values -------------------


def test_locked_sqlite_is_503_retry_after_and_no_content_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # SQLite only: PostgreSQL writers wait on row locks, not on a database-wide write lock.
    with running(tmp_path, run_worker=False, lock_timeout_s=0.3) as svc:
        c, h = svc.client, svc.author
        make_model(c, h, "acme.h")
        caplog.set_level(logging.DEBUG)
        holder = sqlite3.connect(tmp_path / "scoring.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        try:
            body = {"samples": [{"trait": "formality", "text": f"{MARKER} text", "quality": 1}]}
            resp = c.post("/v1/models/acme.h/samples", json=body, headers=h)
            assert error_code(resp, 503) == "database_busy"
            assert resp.json()["error"]["retryable"] is True
            assert resp.headers["Retry-After"] == "1"
            resp = c.patch("/v1/models/acme.h", json={"description": MARKER}, headers=h)
            assert error_code(resp, 503) == "database_busy"
            # Reads do not wait for the writer.
            assert check(c.get("/v1/models/acme.h", headers=h), 200)["description"] == ""
        finally:
            holder.rollback()
            holder.close()
        assert MARKER not in caplog.text
        check(c.post("/v1/models/acme.h/samples", json=body, headers=h), 201)  # the retry succeeds


def test_database_errors_hide_bound_parameters(svc: Svc) -> None:
    """A failing INSERT of sample text (no such model) on either database: the message names no value."""
    with pytest.raises(DBAPIError) as caught, transaction(svc.ctx.sessions) as s:
        s.add(
            SampleRow(
                model_id=987_654,
                trait_id=987_654,
                text=f"{MARKER} private text",
                quality=1.0,
                provenance="authored",
                content_sha256="0" * 64,
                created_at=utcnow(),
            )
        )
    assert MARKER not in str(caught.value)
    assert "hidden" in str(caught.value)
