"""Storage quotas (docs/api.md "Rate limits and quotas"): one person's labels on a model and a namespace's
text are bounded; a request past a quota is refused in the envelope and stores nothing, and colleagues and
other namespaces keep working. Each test lowers a quota to a test's size (the defaults are millions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import SampleRow
from tests.support.service import Svc, _migrate, auth, check, error_code, make_model, running, train_ready


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


# -- edits: one service for the module (SQLite), quotas of the edits' size ----------------------------------


@pytest.fixture(scope="module")
def edits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Svc]:
    """A person keeps 5,000 characters on a model, a namespace 60,000 (each test its own model, and the one
    test of the namespace's quota namespace `lab` alone)."""
    data_dir = tmp_path_factory.mktemp("quota-edits")
    url = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    _migrate(url)
    with running(
        data_dir,
        database_url=url,
        label_quota_rows=40,
        label_quota_chars=5_000,
        namespace_quota_chars=60_000,
    ) as svc:
        yield svc


def long(prefix: str, chars: int) -> str:
    return f"{prefix} " + "z" * (chars - len(prefix) - 1)


def kept(svc: Svc, sample_id: int) -> tuple[str, float]:
    """The stored sample's (text, quality)."""
    with svc.ctx.reads() as s:
        row = s.get(SampleRow, sample_id)
        assert row is not None
        return row.text, row.quality


def test_an_edit_counts_what_it_adds_against_a_persons_quota(edits: Svc) -> None:
    """An annotator's edits are held to their quota by what they add: five edits to 20,000 characters are
    refused with the create's 413 and change nothing stored; a longer text that fits, and a shorter one,
    pass; an owner's edit of their vote may take them past it, and then only what adds is refused: a new
    quality (my labels or the samples route) and a shorter text still pass."""
    c, h = edits.client, "acme.grow"
    make_model(c, edits.author, h)
    ann = person(edits, "ann")
    ids = check(c.post(f"/v1/models/{h}/samples", json={"samples": votes(5, "ann")}, headers=ann), 201)["ids"]
    before = {i: kept(edits, i) for i in ids}

    def edit(i: int, key: dict[str, str], **body: object) -> httpx.Response:
        return c.patch(f"/v1/models/{h}/samples/{i}", json=body, headers=key)

    for i in ids:
        resp = edit(i, ann, text=long(f"ann's sample {i}", 20_000))
        assert error_code(resp, 413) == "quota_exceeded"
        assert "nothing of this request was stored" in resp.json()["error"]["message"]
    assert {i: kept(edits, i) for i in ids} == before
    check(edit(ids[0], ann, text=long("grown", 4_800)), 200)  # with the four others' ~80: within 5,000
    resp = edit(ids[1], ann, text=long("one more", 300), quality=0.0)
    assert error_code(resp, 413) == "quota_exceeded"
    assert kept(edits, ids[1]) == before[ids[1]]
    check(edit(ids[0], ann, text=long("shrunk", 4_000)), 200)
    check(edit(ids[1], ann, text=long("one more", 300), quality=0.0), 200)  # the room the shorter text left
    # The owner lengthens ann's vote (owners are held to the namespace's quota only): ann is past hers.
    check(edit(ids[2], edits.author, text=long("the owner's correction", 3_000)), 200)
    path = f"/v1/models/{h}/my-labels/sample/{ids[2]}"
    assert check(c.patch(path, json={"quality": 0.0}, headers=ann), 200)["quality"] == 0.0
    check(edit(ids[2], ann, quality=1.0), 200)
    assert error_code(edit(ids[3], ann, text=long("longer", 100)), 413) == "quota_exceeded"
    check(edit(ids[2], ann, text=long("ann's own shorter one", 2_500)), 200)


def test_an_edit_counts_what_it_adds_against_the_namespaces_quota(edits: Svc) -> None:
    """In a namespace near its quota, an edit that would take it past is refused with the create's 413
    (the owner's too), naming the namespace, and changes nothing; one that fits, and a new quality through
    my labels, pass."""
    c, owner, h = edits.client, edits.author, "lab.full"
    make_model(c, owner, h)
    texts = [long(f"pool text {i:03d}", 1_000) for i in range(56)]  # 56,000 of the 60,000
    check(c.post(f"/v1/models/{h}/pool", json={"texts": texts}, headers=owner), 201)
    lena = person(edits, "lena", namespace="lab")
    body = {"samples": [{"trait": "formality", "text": "Lena's short vote.", "quality": 1.0}]}
    [mine] = check(c.post(f"/v1/models/{h}/samples", json=body, headers=lena), 201)["ids"]
    theirs = check(c.get(f"/v1/models/{h}/samples", params={"limit": 1}, headers=owner), 200)["items"][0][
        "id"
    ]
    before = kept(edits, mine), kept(edits, theirs)
    for i, key in ((theirs, owner), (mine, lena)):
        resp = c.patch(f"/v1/models/{h}/samples/{i}", json={"text": long("grown", 4_500)}, headers=key)
        assert error_code(resp, 413) == "quota_exceeded" and "'lab'" in resp.json()["error"]["message"]
    assert (kept(edits, mine), kept(edits, theirs)) == before
    path = f"/v1/models/{h}/my-labels/sample/{mine}"
    check(c.patch(path, json={"quality": 0.0}, headers=lena), 200)
    check(c.patch(f"/v1/models/{h}/samples/{mine}", json={"text": long("grown", 1_000)}, headers=lena), 200)
    assert kept(edits, mine)[0] == long("grown", 1_000)


def test_a_reviewers_settling_votes_count_in_their_quota(edits: Svc) -> None:
    """A reviewer's settling votes are their labels too: past their quota the settle is refused with 413,
    nothing stored."""
    c, h = edits.client, "acme.settled"
    make_model(c, edits.author, h)
    rev = person(edits, "rev", role="reviewer")
    first = {"trait": "formality", "text": long("settled one", 4_000), "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=first, headers=rev), 200)
    again = {"trait": "formality", "text": long("settled two", 4_000), "quality": 0.0}
    count = stored(edits, h)
    assert error_code(c.post(f"/v1/models/{h}/settle", json=again, headers=rev), 413) == "quota_exceeded"
    assert stored(edits, h) == count
