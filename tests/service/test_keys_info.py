"""GET /v1/keys/current: the calling key's scope and namespaces, never its secret."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select, update

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import ApiKey, utcnow
from tests.support.service import Svc, check, error_code


def test_current_key_for_each_scope(idle_svc: Svc) -> None:
    c = idle_svc.client
    before = datetime.now(UTC)
    author = check(c.get("/v1/keys/current", headers=idle_svc.author), 200)
    assert set(author) == {"prefix", "scope", "namespaces", "created_at", "name", "role"} | {
        "kind", "roles", "email", "display_name", "actions"  # a person's (tests/service/test_people.py)
    }  # fmt: skip
    assert author["actions"] == ["label", "review", "manage"]
    assert (author["kind"], author["roles"], author["email"]) == (
        "key",
        {"acme": "owner", "lab": "owner"},
        None,
    )
    assert author["role"] == "owner"  # a key created without a role: what every key could do before roles
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
    assert scorer["actions"] == []  # it reads and scores: no label, review or management, whatever its role
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
        "role",
    }


@pytest.mark.parametrize("role", ["annotator", "reviewer", "owner"])
def test_current_key_says_its_role(idle_svc: Svc, role: str) -> None:
    with transaction(idle_svc.ctx.sessions) as s:
        key = create_key(s, ["acme"], "authoring", role=role)
    info = check(idle_svc.client.get("/v1/keys/current", headers={"Authorization": f"Bearer {key}"}), 200)
    assert info["role"] == role


def test_unknown_role_is_refused_and_nothing_stored(idle_svc: Svc) -> None:
    with transaction(idle_svc.ctx.sessions) as s:
        before = s.scalar(select(func.count()).select_from(ApiKey))
    with (
        pytest.raises(ValueError, match="role must be one of annotator, reviewer, owner"),
        transaction(idle_svc.ctx.sessions) as s,
    ):
        create_key(s, ["acme"], "authoring", role="admin")
    with transaction(idle_svc.ctx.sessions) as s:
        assert s.scalar(select(func.count()).select_from(ApiKey)) == before
