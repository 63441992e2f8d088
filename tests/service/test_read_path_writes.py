"""Requests that only read or score write nothing to the database (docs/service-writes.md, "What a request
writes"): scoring, Perspective's analyze, the reads sent as POST and every GET route, under the default
rate limits. The SQL the service sends is watched on its engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi.routing import APIRoute
from sqlalchemy import event

from tests.support.service import Svc, check, make_model, train_ready

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
PARAMS = {"handle": "acme.quiet", "namespace": "acme", "ref": "v1"}


@contextmanager
def writes_of(svc: Svc) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().split(None, 1)[0].upper() in WRITES:
            seen.append(statement.split("\n", 1)[0][:120])

    event.listen(svc.ctx.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(svc.ctx.engine, "before_cursor_execute", record)


def test_scoring_and_reads_write_nothing(svc: Svc) -> None:
    c, h, handle = svc.client, svc.author, PARAMS["handle"]
    make_model(c, h, handle)
    train_ready(c, h, handle)
    check(c.post(f"/v1/models/{handle}/pool", json={"texts": ["a pool text", "another one"]}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/score", json={"content": "Dear Sir"}, headers=h), 200)  # cached
    gets = [
        r.path.removeprefix("/v1").format(**PARAMS)
        for r in svc.app.routes
        if isinstance(r, APIRoute)
        and "GET" in r.methods
        and r.path.startswith("/v1/")
        and set(r.param_convertors) <= set(PARAMS)
    ]
    assert len(gets) >= 20
    analyze = {"comment": {"text": "hello there"}, "requestedAttributes": {"FORMALITY": {}}, "model": handle}
    with writes_of(svc) as written:
        for text in ("Dear Sir", "an uncached text"):
            check(c.post(f"/v1/models/{handle}/score", json={"content": text}, headers=svc.scorer), 200)
        check(c.post(f"/v1/models/{handle}/score/compare", json={"a": "hi", "b": "Dear Sir"}, headers=h), 200)
        check(c.post(f"/v1/models/{handle}/pool/suggest", json={"trait": "formality"}, headers=h), 200)
        preview = {"trait": {"name": "Mood", "positive_label": "cheerful", "negative_label": "gloomy"}}
        url = f"/v1/models/{handle}/traits/preview"
        check(c.post(url, json={**preview, "texts": ["hi"]}, headers=h), 200)
        check(c.post("/v1alpha1/comments:analyze", json=analyze, headers=h), 200)
        for path in gets:
            assert c.get(f"/v1{path}", headers=h).status_code < 500, path
    assert written == []
