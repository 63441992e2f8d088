"""Sample edit (PATCH) and delete through the real service: rules, auth, duplicates, run fingerprints."""

from __future__ import annotations

from typing import Any

from tests.support.service import Svc, check, error_code, make_model, train_ready, wait_settled


def _samples(svc: Svc, handle: str) -> list[dict[str, Any]]:
    page = check(
        svc.client.get(f"/v1/models/{handle}/samples", params={"limit": 500}, headers=svc.author), 200
    )
    return page["items"]


def test_patch_and_delete_a_sample(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.edits")
    first = _samples(svc, "acme.edits")[0]
    assert first["trait"] == "formality" and first["quality"] == 1.0
    sid = first["id"]

    fixed = check(c.patch(f"/v1/models/acme.edits/samples/{sid}", json={"quality": 0.0}, headers=h), 200)
    assert fixed["id"] == sid and fixed["quality"] == 0.0 and fixed["text"] == first["text"]
    moved = check(
        c.patch(
            f"/v1/models/acme.edits/samples/{sid}",
            json={"trait": "Sentiment", "text": "  A brand new text.  ", "quality": 0.25},
            headers=h,
        ),
        200,
    )
    assert moved["trait"] == "sentiment" and moved["text"] == "A brand new text." and moved["quality"] == 0.25
    assert moved["content_sha256"] != first["content_sha256"]
    stored = {s["id"]: s for s in _samples(svc, "acme.edits")}
    assert stored[sid]["trait"] == "sentiment" and stored[sid]["text"] == "A brand new text."
    # A repeat of the same edit is harmless; an empty edit changes nothing.
    assert (
        check(c.patch(f"/v1/models/acme.edits/samples/{sid}", json={"quality": 0.25}, headers=h), 200)
        == moved
    )
    assert check(c.patch(f"/v1/models/acme.edits/samples/{sid}", json={}, headers=h), 200) == moved

    count = len(stored)
    gone = check(c.delete(f"/v1/models/acme.edits/samples/{sid}", headers=h), 200)
    assert gone == {"handle": "acme.edits", "id": sid, "deleted": True}
    assert sid not in {s["id"] for s in _samples(svc, "acme.edits")}
    assert check(c.get("/v1/models/acme.edits", headers=h), 200)["sample_count"] == count - 1
    assert error_code(c.delete(f"/v1/models/acme.edits/samples/{sid}", headers=h), 404) == "sample_not_found"
    assert error_code(c.patch(f"/v1/models/acme.edits/samples/{sid}", json={}, headers=h), 404) == (
        "sample_not_found"
    )


def test_edit_validation_loses_nothing(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.valid")
    before = _samples(svc, "acme.valid")
    sid = before[0]["id"]
    url = f"/v1/models/acme.valid/samples/{sid}"
    for body, code in (
        ({"quality": 1.5}, "validation_error"),
        ({"quality": "0.5"}, "validation_error"),
        ({"text": "   "}, "empty_text"),
        ({"text": "x" * 20_001}, "text_too_long"),
        ({"trait": "nope"}, "unknown_trait"),
        ({"source": "x"}, "unknown_field"),
    ):
        resp = c.patch(url, json=body, headers=h)
        assert error_code(resp, 422) == code, body
        assert resp.json()["error"]["details"], body
    assert _samples(svc, "acme.valid") == before
    for bad in ("abc", "0", "-3", "99999999999999999999"):
        resp = c.patch(f"/v1/models/acme.valid/samples/{bad}", json={}, headers=h)
        assert resp.status_code in (404, 422) and resp.status_code < 500, (bad, resp.text)
    assert (
        error_code(c.delete("/v1/models/acme.valid/samples/3000000000", headers=h), 404) == "sample_not_found"
    )


def test_edit_into_a_duplicate_keeps_one(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.dups")
    a, b = _samples(svc, "acme.dups")[:2]
    assert a["trait"] == b["trait"] and a["quality"] == b["quality"]
    merged = check(
        c.patch(f"/v1/models/acme.dups/samples/{b['id']}", json={"text": a["text"]}, headers=h), 200
    )
    assert merged["id"] == a["id"]  # the stored identical sample; the edited one is gone
    ids = [s["id"] for s in _samples(svc, "acme.dups")]
    assert a["id"] in ids and b["id"] not in ids
    # Creating it again still returns the one stored id.
    again = {"trait": a["trait"], "text": a["text"], "quality": a["quality"]}
    assert check(c.post("/v1/models/acme.dups/samples", json={"samples": [again]}, headers=h), 201)[
        "ids"
    ] == [a["id"]]


def test_edits_need_the_owner_and_a_draft(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.owned")
    make_model(c, h, "lab.neighbour")
    sid = _samples(svc, "acme.owned")[0]["id"]
    neighbour = _samples(svc, "lab.neighbour")[0]["id"]
    url = f"/v1/models/acme.owned/samples/{sid}"
    assert error_code(c.patch(url, json={"quality": 0.0}), 401) == "unauthorized"
    assert error_code(c.delete(url), 401) == "unauthorized"
    assert error_code(c.patch(url, json={"quality": 0.0}, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.delete(url, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.patch(url, json={"quality": 0.0}, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.delete(url, headers=svc.other), 404) == "model_not_found"
    # An id of another model is not found through this one.
    assert error_code(c.delete(f"/v1/models/acme.owned/samples/{neighbour}", headers=h), 404) == (
        "sample_not_found"
    )
    # The public catalog: readable by every key, changed only by its owner.
    make_model(c, svc.publisher, "public.shared")
    public_id = check(c.get("/v1/models/public.shared/samples", headers=svc.publisher), 200)["items"][0]["id"]
    public_url = f"/v1/models/public.shared/samples/{public_id}"
    assert error_code(c.patch(public_url, json={"quality": 0.0}, headers=h), 403) == "forbidden"
    assert error_code(c.delete(public_url, headers=h), 403) == "forbidden"
    assert check(c.delete(public_url, headers=svc.publisher), 200)["deleted"] is True

    train_ready(c, h, "acme.owned")
    assert error_code(c.patch(url, json={"quality": 0.0}, headers=h), 409) == "model_not_draft"
    assert error_code(c.delete(url, headers=h), 409) == "model_not_draft"
    assert sid in {s["id"] for s in _samples(svc, "acme.owned")}


def test_run_fingerprints_follow_edits(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.fp")
    body = {"synth_type": "from_traits", "effort": "low"}
    first = check(c.post("/v1/models/acme.fp/samples/synthesize", json=body, headers=h), 202)
    wait_settled(c, "acme.fp", h)
    repeat = c.post("/v1/models/acme.fp/samples/synthesize", json=body, headers=h)
    assert error_code(repeat, 409) == "duplicate_run" and repeat.headers["X-Run-Id"] == first["run_id"]

    authored = [s for s in _samples(svc, "acme.fp") if s["provenance"] == "authored"]
    check(c.patch(f"/v1/models/acme.fp/samples/{authored[0]['id']}", json={"quality": 0.5}, headers=h), 200)
    second = check(c.post("/v1/models/acme.fp/samples/synthesize", json=body, headers=h), 202)
    assert second["run_id"] != first["run_id"]
    wait_settled(c, "acme.fp", h)
    check(c.delete(f"/v1/models/acme.fp/samples/{authored[1]['id']}", headers=h), 200)
    third = check(c.post("/v1/models/acme.fp/samples/synthesize", json=body, headers=h), 202)
    assert third["run_id"] not in (first["run_id"], second["run_id"])
    wait_settled(c, "acme.fp", h)

    # An edited synthesized sample becomes the caller's (authored), so the fingerprint sees it.
    synthesized = [s for s in _samples(svc, "acme.fp") if s["provenance"] == "synthesized"]
    assert synthesized
    edited = check(
        c.patch(f"/v1/models/acme.fp/samples/{synthesized[0]['id']}", json={"quality": 0.4}, headers=h), 200
    )
    assert edited["provenance"] == "authored"
    check(c.post("/v1/models/acme.fp/samples/synthesize", json=body, headers=h), 202)
    wait_settled(c, "acme.fp", h)


def test_id_routes_take_only_numeric_ids_so_a_fixed_path_s_other_methods_answer_405(svc: Svc) -> None:
    """`{sample_id}` and `{text_id}` match digits only: `samples/synthesize` and `pool/suggest` are the fixed
    POST routes, so another method there is 405 naming only POST (schemathesis found 422 `path.sample_id`
    and `Allow: DELETE, POST`), and a non-numeric id is 404, not a validation error."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.routes")
    for method, path in (
        ("PATCH", "samples/synthesize"),
        ("DELETE", "samples/synthesize"),
        ("PUT", "pool/suggest"),
        ("DELETE", "pool/suggest"),
    ):
        resp = c.request(method, f"/v1/models/acme.routes/{path}", headers=h)
        assert resp.status_code == 405, (method, path, resp.text)
        assert resp.headers["allow"] == "POST", (method, path)
        assert resp.json()["error"]["code"] == "method_not_allowed"
    for method, path in (("PATCH", "samples/abc"), ("DELETE", "samples/1.5"), ("DELETE", "pool/x1")):
        resp = c.request(method, f"/v1/models/acme.routes/{path}", headers=h, json={})
        assert resp.status_code == 404, (method, path, resp.text)
        assert resp.json()["error"]["code"] == "not_found"
    # Numeric ids still reach their routes (and a huge one is just not there).
    assert error_code(c.delete("/v1/models/acme.routes/samples/99999999999999999999", headers=h), 404) == (
        "sample_not_found"
    )
