"""Auth (401/403/404, public catalog; a request without a key is 401 before its body is read), the error
envelope everywhere (405 with its Allow, 404 for a trailing slash), request ids."""

from __future__ import annotations

import re

import pytest
from fastapi import APIRouter

from tests.support.service import Svc, check, error_code, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free


def test_401_missing_or_bad_key(svc: Svc) -> None:
    c = svc.client
    make_model(c, svc.author, "acme.auth", with_data=False)
    for headers in (
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer sk_000000000000_" + "A" * 43},
    ):
        resp = c.get("/v1/models/acme.auth", headers=headers)
        assert error_code(resp, 401) == "unauthorized"
    # A real prefix with the wrong secret.
    key = svc.author["Authorization"].split()[1]
    tampered = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    assert error_code(
        c.get("/v1/models/acme.auth", headers={"Authorization": f"Bearer {tampered}"}), 401
    ) == ("unauthorized")
    assert check(c.get("/v1/health"), 200)["status"] == "ok"  # health needs no key


def test_403_scope_and_namespace_404_unreadable(svc: Svc) -> None:
    c = svc.client
    make_model(c, svc.author, "acme.sec")
    # Scoring keys read and score but never write.
    check(c.get("/v1/models/acme.sec", headers=svc.scorer), 200)
    check(c.get("/v1/models/acme.sec/traits", headers=svc.scorer), 200)
    check(c.get("/v1/models/acme.sec/versions", headers=svc.scorer), 200)
    for resp in (
        c.patch("/v1/models/acme.sec", json={"description": "x"}, headers=svc.scorer),
        c.delete("/v1/models/acme.sec", headers=svc.scorer),
        c.post("/v1/models/acme.sec/train", json={}, headers=svc.scorer),
        c.get("/v1/models/acme.sec/samples", headers=svc.scorer),
    ):
        assert error_code(resp, 403) == "forbidden"
    # Another namespace's model is indistinguishable from a missing one.
    for handle in ("acme.sec", "acme.missing"):
        assert error_code(c.get(f"/v1/models/{handle}", headers=svc.other), 404) == "model_not_found"
        assert error_code(
            c.post(f"/v1/models/{handle}/score", json={"content": "x"}, headers=svc.other), 404
        ) == ("model_not_found")
        assert error_code(
            c.patch(f"/v1/models/{handle}", json={"description": "x"}, headers=svc.other), 404
        ) == ("model_not_found")


def test_public_catalog(svc: Svc) -> None:
    c = svc.client
    make_model(c, svc.publisher, "public.sentiment")
    train_ready(c, svc.publisher, "public.sentiment")
    assert (
        error_code(c.post("/v1/models", json={"handle": "public.mine"}, headers=svc.author), 403)
        == "forbidden"
    )
    # Every key lists (without namespace), reads and scores the public catalog...
    for headers in (svc.author, svc.scorer, svc.other):
        listed = check(c.get("/v1/models", headers=headers), 200)
        assert [m["handle"] for m in listed["items"]] == ["public.sentiment"]
        check(
            c.post("/v1/models/public.sentiment/score", json={"content": "great work"}, headers=headers), 200
        )
    # ...but only the owner of `public` changes it.
    assert error_code(
        c.patch("/v1/models/public.sentiment", json={"description": "x"}, headers=svc.author), 403
    ) == ("forbidden")
    assert (
        error_code(c.post("/v1/models/public.sentiment/versions/prod", headers=svc.other), 403) == "forbidden"
    )
    check(c.post("/v1/models/public.sentiment/versions/prod", headers=svc.publisher), 200)
    # Public models are not listed under a private namespace.
    assert check(c.get("/v1/models", params={"namespace": "acme"}, headers=svc.author), 200)["items"] == []


def test_envelopes_and_request_ids(svc: Svc) -> None:
    c, h = svc.client, svc.author
    resp = c.get("/v1/nothing-here", headers=h)
    assert error_code(resp, 404) == "not_found"
    assert error_code(c.get("/elsewhere"), 404) == "not_found"
    resp = c.put("/v1/models", headers=h)
    assert error_code(resp, 405) == "method_not_allowed" and resp.headers["Allow"]
    resp = c.post("/v1/models", content=b"{not json", headers={**h, "Content-Type": "application/json"})
    assert error_code(resp, 422) == "validation_error"
    details = c.post("/v1/models", json={"handle": 5}, headers=h).json()["error"]["details"]
    assert details and details[0]["loc"][:2] == ["body", "handle"]
    big = b"x" * (16 * 1024 * 1024 + 1)
    assert error_code(
        c.post("/v1/models", content=big, headers={**h, "Content-Type": "application/json"}), 413
    ) == ("payload_too_large")

    # Request ids: echoed when supplied, minted otherwise, on successes and errors alike.
    ok = c.get("/v1/health", headers={"X-Request-Id": "client-abc-123"})
    assert ok.headers["X-Request-Id"] == "client-abc-123"
    err = c.get("/v1/models/acme.none", headers={**h, "X-Request-Id": "trace-42"})
    assert err.headers["X-Request-Id"] == "trace-42" and err.json()["error"]["request_id"] == "trace-42"
    minted = c.get("/v1/health").headers["X-Request-Id"]
    assert minted.startswith("req_") and len(minted) == 36
    assert c.get("/v1/health", headers={"X-Request-Id": "bad id with spaces"}).headers["X-Request-Id"] != (
        "bad id with spaces"
    )


def test_500_is_an_envelope(svc: Svc) -> None:
    router = APIRouter()

    @router.get("/v1/_boom")
    def boom() -> None:
        raise RuntimeError("kaboom")

    svc.app.include_router(router)
    resp = svc.client.get("/v1/_boom", headers={**svc.author, "X-Request-Id": "boom-1"})
    assert error_code(resp, 500) == "internal_error"
    assert resp.headers["X-Request-Id"] == "boom-1" and "kaboom" not in resp.text


def _concrete(template: str) -> str:
    """An OpenAPI path template with a value in each placeholder (ids are numbers, as their routes take)."""
    values = {
        "handle": "acme.h",
        "key": "formality",
        "ref": "prod",
        "trait": "formality",
        "namespace": "acme",
        "member": "pat@example.com",
        "annotator": "pat@example.com",
        "kind": "sample",
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
