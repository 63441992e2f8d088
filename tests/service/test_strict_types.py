"""Request bodies are strictly typed: no string numbers, no integer booleans; integers are numbers."""

from __future__ import annotations

import gc

from fastapi.routing import APIRoute

from service.process.api import _query_names
from tests.service.conftest import Svc
from tests.service.helpers import check, error_code, make_model


def test_loosely_typed_values_are_refused_and_nothing_is_stored(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.types")
    before = check(c.get("/v1/models/acme.types", headers=h), 200)
    path = "/v1/models/acme.types/samples"
    for quality in ("0.5", "1", True, None):
        body = {"samples": [{"trait": "formality", "text": "Dear Sir or Madam,", "quality": quality}]}
        assert error_code(c.post(path, json=body, headers=h), 422) == "validation_error", quality
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


def test_each_route_knows_its_own_query_names_when_routes_come_and_go() -> None:
    """Tests build many apps in one process; a route made after another was collected often gets its address
    (CPython), so a cache keyed by id(route) once gave it the old names (an intermittent 422)."""

    def with_namespace(namespace: str | None = None) -> None: ...

    def with_limit(limit: int = 5) -> None: ...

    for _ in range(20):
        first = APIRoute("/a", with_namespace)
        assert _query_names(first) == {"namespace"}
        del first
        gc.collect(1)  # the young generations: where the route and its cycles are (cheap in a big heap)
        assert _query_names(APIRoute("/b", with_limit)) == {"limit"}
