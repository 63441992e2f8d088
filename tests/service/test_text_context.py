"""Context beside the text: metadata kept by pool and sample imports, listed, filtered and exported; a
model's guidelines versioned, with each person's last read (docs/api.md "Text metadata", "Guidelines")."""

from __future__ import annotations

from sqlalchemy import func, select

from core.contract import MAX_METADATA_BYTES, MAX_METADATA_KEYS
from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import AuditEvent, PoolText
from tests.support.service import Svc, auth, check, error_code, make_model

H = "acme.context"


def pool_rows(svc: Svc) -> int:
    with transaction(svc.ctx.reads) as s:
        return s.scalar(select(func.count()).select_from(PoolText)) or 0


def test_metadata_is_kept_listed_filtered_and_exported(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, H)
    texts = ["A post from the north.", "A post from the south.", "Another from the north."]
    meta = [{"community": "north", "id": 7}, {"community": "south", "id": 8, "flag": None}, None]
    check(c.post(f"/v1/models/{H}/pool", json={"texts": texts, "metadata": meta}, headers=h), 201)
    page = check(c.get(f"/v1/models/{H}/pool", headers=h), 200)
    assert [x["metadata"] for x in page["items"]] == meta
    # Filtered by a key's value (as text: the number 7 matches "7"), every filter at once.
    north = check(c.get(f"/v1/models/{H}/pool", params={"meta": "community:north"}, headers=h), 200)
    assert [x["text"] for x in north["items"]] == [texts[0]] and north["total"] == 1
    both = c.get(f"/v1/models/{H}/pool", params=[("meta", "community:south"), ("meta", "id:8")], headers=h)
    assert [x["text"] for x in check(both, 200)["items"]] == [texts[1]]
    assert check(c.get(f"/v1/models/{H}/pool", params={"meta": "id:9"}, headers=h), 200)["total"] == 0
    resp = c.get(f"/v1/models/{H}/pool", params={"meta": "no colon"}, headers=h)
    assert error_code(resp, 422) == "validation_error"  # the documented pattern: key:value
    # A page's cursor continues its own listing only: not one with another phrase or filter.
    first = check(c.get(f"/v1/models/{H}/pool", params={"q": "north", "limit": 1}, headers=h), 200)
    assert first["next_cursor"] and first["total"] == 2
    for other in ({"q": "post"}, {"q": "north", "meta": "community:north"}, {}):
        resp = c.get(f"/v1/models/{H}/pool", params={**other, "cursor": first["next_cursor"]}, headers=h)
        assert error_code(resp, 400) == "invalid_cursor", other
    rest = c.get(f"/v1/models/{H}/pool", params={"q": "north", "cursor": first["next_cursor"]}, headers=h)
    assert [x["text"] for x in check(rest, 200)["items"]] == [texts[2]]
    resp = c.get(f"/v1/models/{H}/pool", params=[("meta", f"k{i}:v") for i in range(21)], headers=h)
    assert error_code(resp, 422) == "invalid_metadata_filter"
    # Beside a suggested text.
    suggested = check(
        c.post(f"/v1/models/{H}/pool/suggest", json={"trait": "formality", "k": 3}, headers=h), 200
    )
    assert {x["text"]: x["metadata"] for x in suggested["items"]} == dict(zip(texts, meta, strict=True))

    # Bad metadata: 422 in the envelope saying which bound, and nothing stored.
    before = pool_rows(svc)
    too_many = {f"k{i}": i for i in range(MAX_METADATA_KEYS + 1)}
    too_big = {"note": "x" * MAX_METADATA_BYTES}
    for bad in ([too_many], [too_big], [{"nested": {"a": 1}}], [{'a"b': 1}], [{"a": 1}, {"b": 2}]):
        resp = c.post(f"/v1/models/{H}/pool", json={"texts": ["One more text."], "metadata": bad}, headers=h)
        assert resp.status_code == 422, resp.text
    resp = c.post(
        f"/v1/models/{H}/pool", json={"texts": ["One more text."], "metadata": [too_big]}, headers=h
    )
    assert error_code(resp, 422) == "invalid_metadata" and f"{MAX_METADATA_BYTES:,}" in resp.text
    assert pool_rows(svc) == before

    # A sample import keeps its row's metadata; the samples listing (the export) carries it.
    row = {"trait": "formality", "text": "Per our agreement.", "quality": 1.0, "provenance": "imported",
           "metadata": {"source": "forum", "year": 2019}}  # fmt: skip
    [sid] = check(c.post(f"/v1/models/{H}/samples", json={"samples": [row]}, headers=h), 201)["ids"]
    listed = check(c.get(f"/v1/models/{H}/samples", params={"limit": 500}, headers=h), 200)["items"]
    assert {x["id"]: x["metadata"] for x in listed}[sid] == {"source": "forum", "year": 2019}

    # Beside a disagreed text (the Disagreements tab): its pool text's metadata.
    votes = [{"trait": "formality", "text": texts[0], "quality": 1.0},
             {"trait": "formality", "text": texts[0], "quality": 0.0, "annotator": "rater-9"}]  # fmt: skip
    check(c.post(f"/v1/models/{H}/samples", json={"samples": votes}, headers=h), 201)
    agreement = check(c.get(f"/v1/models/{H}/agreement", params={"trait": "formality"}, headers=h), 200)
    disagreed = {t["text"]: t.get("metadata") for t in agreement["traits"]["formality"]["disagreed"]}
    assert disagreed[texts[0]] == meta[0]


def test_guidelines_are_versioned_and_each_person_s_read_is_kept(svc: Svc) -> None:
    c, owner = svc.client, svc.author
    make_model(c, owner, H, with_data=False)
    with transaction(svc.ctx.sessions) as s:
        ann = auth(create_key(s, ["acme"], "authoring", "ann", "annotator"))
    url = f"/v1/models/{H}/guidelines"
    empty = check(c.get(url, headers=ann), 200)
    assert (empty["version_no"], empty["markdown"], empty["changed_since_read"]) == (0, "", False)
    assert error_code(c.put(url, json={"markdown": "# Mine"}, headers=ann), 403) == "forbidden"

    v1 = check(
        c.put(url, json={"markdown": "# Formality\n\nFormal: letters.", "note": "first"}, headers=owner), 200
    )
    assert (v1["version_no"], v1["changed_since_read"]) == (1, False)  # the saver read what they wrote
    seen = check(c.get(url, headers=ann), 200)
    assert (seen["version_no"], seen["read_version_no"], seen["changed_since_read"]) == (1, 0, True)
    assert (
        check(c.post(f"{url}/read", json={"version_no": 1}, headers=ann), 200)["changed_since_read"] is False
    )
    # The same text again is no new version; a change is.
    assert (
        check(c.put(url, json={"markdown": "# Formality\n\nFormal: letters."}, headers=owner), 200)[
            "version_no"
        ]
        == 1
    )
    body = {"markdown": "# Formality\n\nFormal: letters and reports.", "note": "reports count"}
    check(c.put(url, json=body, headers=owner), 200)
    again = check(c.get(url, headers=ann), 200)
    assert (again["version_no"], again["read_version_no"], again["changed_since_read"]) == (2, 1, True)
    resp = c.post(f"{url}/read", json={"version_no": 3}, headers=ann)
    assert error_code(resp, 404) == "guidelines_version_not_found"

    versions = check(c.get(f"{url}/versions", params={"limit": 1}, headers=ann), 200)
    [newest] = versions["items"]
    assert (newest["version_no"], newest["note"], newest["lines_added"], newest["lines_removed"]) == (
        2, "reports count", 1, 1,
    )  # fmt: skip
    older = check(c.get(f"{url}/versions", params={"cursor": versions["next_cursor"]}, headers=ann), 200)
    assert [(x["version_no"], x["lines_added"], x["lines_removed"]) for x in older["items"]] == [(1, 3, 0)]
    with transaction(svc.ctx.reads) as s:
        logged = s.scalars(select(AuditEvent.detail).where(AuditEvent.kind == "guidelines_changed")).all()
    assert [(d["version_no"], d["lines_added"], d["lines_removed"]) for d in logged] == [(1, 3, 0), (2, 1, 1)]
