"""GET /v1/keys/current: the calling key's scope and namespaces, never its secret."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from service.store.db import transaction
from service.store.tables import ApiKey, utcnow
from tests.service.conftest import Svc
from tests.service.helpers import check, error_code


def test_current_key_for_each_scope(idle_svc: Svc) -> None:
    c = idle_svc.client
    before = datetime.now(UTC)
    author = check(c.get("/v1/keys/current", headers=idle_svc.author), 200)
    assert set(author) == {"prefix", "scope", "namespaces", "created_at", "name"}
    assert author["name"] == f"key-{author['prefix']}"  # an unnamed key labels as key-<prefix>
    assert author["scope"] == "authoring"
    assert author["namespaces"] == ["acme", "lab"]
    key = idle_svc.author["Authorization"].split()[1]
    assert key.startswith(f"sk_{author['prefix']}_")
    assert key.split("_", 2)[2] not in c.get("/v1/keys/current", headers=idle_svc.author).text
    created = datetime.fromisoformat(author["created_at"])
    assert created.tzinfo is not None and created <= before

    scorer = check(c.get("/v1/keys/current", headers=idle_svc.scorer), 200)
    assert (scorer["scope"], scorer["namespaces"]) == ("scoring", ["acme"])
    assert scorer["prefix"] != author["prefix"]


def test_current_key_needs_a_valid_key(idle_svc: Svc) -> None:
    c = idle_svc.client
    fake = "Bearer sk_000000000000_" + "A" * 43
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": fake}):
        assert error_code(c.get("/v1/keys/current", headers=headers), 401) == "unauthorized"
    prefix = check(c.get("/v1/keys/current", headers=idle_svc.other), 200)["prefix"]
    with transaction(idle_svc.ctx.sessions) as s:
        s.execute(update(ApiKey).where(ApiKey.prefix == prefix).values(revoked_at=utcnow()))
    assert error_code(c.get("/v1/keys/current", headers=idle_svc.other), 401) == "unauthorized"


def test_current_key_in_openapi(idle_svc: Svc) -> None:
    doc = check(idle_svc.client.get("/v1/openapi.json"), 200)
    op = doc["paths"]["/v1/keys/current"]["get"]
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/KeyInfo"
    }
    assert "401" in op["responses"]
    assert set(doc["components"]["schemas"]["KeyInfo"]["required"]) == {
        "prefix",
        "scope",
        "namespaces",
        "created_at",
        "name",
    }
