"""Request bodies are strictly typed: no string numbers, no integer booleans; integers are numbers. No NUL or
lone surrogate in a body, a path or a query; JSON nested too deep is a 422 on every route taking a body."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from fastapi.routing import APIRoute
from sqlalchemy import func, select

from service.process.api import _query_names
from service.store.db import transaction
from service.store.schema import Model, SampleRow, Trait
from tests.support.service import Svc, check, error_code, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free


def test_loosely_typed_values_are_refused_and_nothing_is_stored(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.types")
    before = check(c.get("/v1/models/acme.types", headers=h), 200)
    path = "/v1/models/acme.types/samples"
    for quality in ("0.5", "1", True, None):
        body = {"samples": [{"trait": "formality", "text": "Dear Sir or Madam,", "quality": quality}]}
        assert error_code(c.post(path, json=body, headers=h), 422) == "validation_error", quality
    # Python's JSON parser reads NaN and the infinities: the quality's bounds refuse them (NaN fails both).
    for token in ("NaN", "Infinity", "-Infinity"):
        raw = f'{{"samples": [{{"trait": "formality", "text": "Dear Sir or Madam,", "quality": {token}}}]}}'
        resp = c.post(path, content=raw.encode(), headers={**h, "Content-Type": "application/json"})
        assert error_code(resp, 422) == "validation_error", token
    for value in (1, 0, "true", "false"):
        resp = c.patch("/v1/models/acme.types", json={"zero_data_retention": value}, headers=h)
        assert error_code(resp, 422) == "validation_error", value
        resp = c.post("/v1/models", json={"handle": "acme.zdr", "zero_data_retention": value}, headers=h)
        assert error_code(resp, 422) == "validation_error", value
    for depth in (2.5, "2", True):
        resp = c.post("/v1/models", json={"handle": "acme.depth", "max_depth": depth}, headers=h)
        assert error_code(resp, 422) == "validation_error", depth
    after = check(c.get("/v1/models/acme.types", headers=h), 200)
    assert after["sample_count"] == before["sample_count"] and after["zero_data_retention"] is False
    assert c.get("/v1/models/acme.zdr", headers=h).status_code == 404
    assert c.get("/v1/models/acme.depth", headers=h).status_code == 404

    # JSON Schema's integer: a number without a fraction, 2.0 included.
    created = check(c.post("/v1/models", json={"handle": "acme.depth", "max_depth": 2.0}, headers=h), 201)
    assert created["max_depth"] == 2 and isinstance(created["max_depth"], int)

    # Integers are numbers: quality 1 and 0 are the poles.
    integers = {
        "samples": [
            {"trait": "formality", "text": "Dear Sir or Madam,", "quality": 1},
            {"trait": "formality", "text": "yo whats up", "quality": 0},
        ]
    }
    assert len(check(c.post(path, json=integers, headers=h), 201)["ids"]) == 2
    assert check(c.get("/v1/models/acme.types", headers=h), 200)["sample_count"] == before["sample_count"] + 2


def test_unknown_query_parameters_are_refused_like_unknown_fields(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.query")
    for path in ("/v1/models?limt=5", "/v1/models/acme.query?x=1", "/v1/models/acme.query/samples?=false"):
        resp = c.get(path, headers=h)
        assert error_code(resp, 422) == "unknown_field", path
        assert resp.json()["error"]["details"][0]["loc"][0] == "query"
    check(c.get("/v1/models", params={"limit": 5, "namespace": "acme"}, headers=h), 200)
    # A parameter given twice: neither value is dropped silently.
    twice = c.get("/v1/models?kind=a&kind=b", headers=h)
    assert error_code(twice, 422) == "validation_error"
    assert twice.json()["error"]["details"][0] == {
        "loc": ["query", "kind"],
        "msg": "must be given once",
        "type": "repeated_parameter",
    }


def test_each_route_knows_its_own_query_names_when_routes_come_and_go() -> None:
    """Tests build many apps in one process; a route made after another was collected often gets its address
    (CPython), so a cache keyed by id(route) once gave it the old names (an intermittent 422)."""

    def with_namespace(namespace: str | None = None) -> None: ...

    def with_limit(limit: int = 5) -> None: ...

    for _ in range(20):
        first = APIRoute("/a", with_namespace)
        assert set(_query_names(first)) == {"namespace"}
        del first
        gc.collect(1)  # the young generations: where the route and its cycles are (cheap in a big heap)
        assert set(_query_names(APIRoute("/b", with_limit))) == {"limit"}


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
