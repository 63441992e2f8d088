"""Storage quotas (docs/api.md "Rate limits and quotas"): one person's labels on a model and a namespace's
text are bounded; a request past a quota is refused in the envelope and stores nothing, and colleagues and
other namespaces keep working. Each test lowers a quota to a test's size (the defaults are millions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, auth, check, error_code, make_model, running, train_ready


@pytest.fixture
def small(tmp_path: Path, database_url: str) -> Iterator[Svc]:
    # Quotas of a test's size: the defaults (50,000 labels, 50 million characters) take minutes to reach.
    with running(
        tmp_path,
        database_url=database_url,
        label_quota_rows=40,
        label_quota_chars=20_000,
        namespace_quota_chars=200_000,
    ) as svc:
        yield svc


def person(svc: Svc, name: str, role: str = "annotator", namespace: str = "acme") -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, [namespace], "authoring", name, role))


def votes(n: int, prefix: str, chars: int = 0) -> list[dict[str, Any]]:
    pad = "x" * max(0, chars - len(prefix) - 8)
    return [{"trait": "formality", "text": f"{prefix} {i:05d} {pad}", "quality": 1.0} for i in range(n)]


def stored(svc: Svc, handle: str) -> int:
    model = check(svc.client.get(f"/v1/models/{handle}", headers=svc.author), 200)
    return int(model["sample_count"]) + int(model["buffered_feedback"])


def test_an_annotators_flood_of_long_rows_is_refused_and_stores_nothing(small: Svc) -> None:
    c, h = small.client, "acme.flood"
    make_model(c, small.author, h)
    ann, bob = person(small, "ann"), person(small, "bob")
    before = stored(small, h)
    check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(3, "ann", 5_000)}, headers=ann), 201)
    resp = c.post(f"/v1/models/{h}/samples", json={"samples": votes(3, "ann more", 5_000)}, headers=ann)
    assert error_code(resp, 413) == "quota_exceeded"
    assert "nothing of this request was stored" in resp.json()["error"]["message"]
    assert stored(small, h) == before + 3
    # A colleague and the owner are not held to ann's quota.
    check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(3, "bob", 5_000)}, headers=bob), 201)
    check(
        c.post(f"/v1/models/{h}/samples", json={"samples": votes(10, "own", 5_000)}, headers=small.author),
        201,
    )
    assert stored(small, h) == before + 16


def test_many_short_votes_meet_the_row_quota_with_a_429(small: Svc) -> None:
    c, h = small.client, "acme.votes"
    make_model(c, small.author, h)
    ann = person(small, "ann")
    check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(30, "short")}, headers=ann), 201)
    again = check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(30, "short")}, headers=ann), 201)
    assert len(again["duplicates"]) == 30  # a repeat stores nothing, so it is never refused
    resp = c.post(f"/v1/models/{h}/samples", json={"samples": votes(11, "other")}, headers=ann)
    assert error_code(resp, 429) == "quota_exceeded"
    assert "40" in resp.json()["error"]["message"]
    check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(10, "other")}, headers=ann), 201)
    assert stored(small, h) == 24 + 40


def test_feedback_and_unsure_marks_count_in_the_same_quota(small: Svc) -> None:
    c, h = small.client, "acme.fbq"
    make_model(c, small.author, h)
    train_ready(c, small.author, h)
    ann = person(small, "ann")
    for i in range(39):
        body = {"content": f"text {i}", "feedback": [{"trait": "formality", "quality": 1.0}]}
        check(c.post(f"/v1/models/{h}/score", json=body, headers=ann), 200)
    check(c.post(f"/v1/models/{h}/unsure", json={"trait": "formality", "text": "hmm"}, headers=ann), 201)
    body = {"content": "one too many", "feedback": [{"trait": "formality", "quality": 1.0}]}
    assert error_code(c.post(f"/v1/models/{h}/score", json=body, headers=ann), 429) == "quota_exceeded"
    resp = c.post(f"/v1/models/{h}/unsure", json={"trait": "formality", "text": "again"}, headers=ann)
    assert error_code(resp, 429) == "quota_exceeded"
    assert check(c.get(f"/v1/models/{h}", headers=small.author), 200)["buffered_feedback"] == 39


def test_a_namespace_past_its_quota_refuses_everyone_and_no_other_namespace(small: Svc) -> None:
    c, owner = small.client, small.author
    make_model(c, owner, "acme.big")
    texts = [f"pool text {i:04d} " + "y" * 980 for i in range(150)]  # ~150,000 characters
    check(c.post("/v1/models/acme.big/pool", json={"texts": texts}, headers=owner), 201)
    more = [f"more text {i:04d} " + "y" * 980 for i in range(60)]
    resp = c.post("/v1/models/acme.big/pool", json={"texts": more}, headers=owner)
    assert error_code(resp, 413) == "quota_exceeded" and "'acme'" in resp.json()["error"]["message"]
    assert check(c.get("/v1/models/acme.big/pool", params={"limit": 500}, headers=owner), 200)["total"] == 150
    items = [{"trait": "formality", "text": t, "quality": 1.0} for t in more]
    resp = c.post("/v1/models/acme.big/evaluation-set", json={"items": items}, headers=owner)
    assert error_code(resp, 413) == "quota_exceeded"
    make_model(c, owner, "lab.fine")  # another namespace: its own quota
    check(c.post("/v1/models/lab.fine/pool", json={"texts": more}, headers=owner), 201)
