"""Traits and samples: keys, bounds, edits only while untrained, duplicates, all-or-none, filters."""

from __future__ import annotations

from core.contract import MAX_SOURCE_ID_CHARS
from tests.support.service import TRAITS, Svc, check, error_code, make_model, samples, train_ready


def test_trait_keys_and_detail(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.t"}, headers=h), 201)
    traits = [
        {"name": "Formal Tone!", "positive_label": "formal", "negative_label": "casual"},
        {"name": "formal tone", "positive_label": "a", "negative_label": "b", "aggregation": "max"},
        {"name": "***", "positive_label": "a", "negative_label": "b", "description": "symbols only"},
    ]
    out = check(c.post("/v1/models/acme.t/traits", json={"traits": traits}, headers=h), 201)["traits"]
    assert [t["key"] for t in out] == ["formal_tone", "formal_tone_2", "trait"]
    first = out[0]
    assert first["kind"] == "extrinsic" and first["aggregation"] == "mean" and first["description"] == ""
    assert (first["sample_count"], first["positive_samples"], first["negative_samples"]) == (0, 0, 0)
    assert (first["discrimination"], first["explained_variance"], first["anchor_sample_ids"]) == (
        0.0,
        0.0,
        {},
    )
    assert out[1]["aggregation"] == "max"
    # Rename keeps the key; null leaves a field unchanged.
    out = check(
        c.patch(
            "/v1/models/acme.t/traits/formal_tone", json={"name": "Register", "description": None}, headers=h
        ),
        200,
    )["traits"]
    assert out[0]["key"] == "formal_tone" and out[0]["name"] == "Register"
    assert check(c.get("/v1/models/acme.t", headers=h), 200)["traits"] == ["Register", "formal tone", "***"]
    assert (
        error_code(c.patch("/v1/models/acme.t/traits/nope", json={"name": "x"}, headers=h), 404)
        == "trait_not_found"
    )
    assert (
        error_code(c.patch("/v1/models/acme.t/traits/trait", json={"aggregation": "median"}, headers=h), 422)
        == "validation_error"
    )
    assert check(c.delete("/v1/models/acme.t/traits/trait", headers=h), 200) == {
        "handle": "acme.t",
        "deleted": True,
    }
    assert len(check(c.get("/v1/models/acme.t/traits", headers=h), 200)["traits"]) == 2
    # Bounds: at least one trait; kind is not accepted; labels required.
    assert (
        error_code(c.post("/v1/models/acme.t/traits", json={"traits": []}, headers=h), 422)
        == "validation_error"
    )
    bad = {"name": "x", "positive_label": "a", "negative_label": "b", "kind": "intrinsic"}
    assert (
        error_code(c.post("/v1/models/acme.t/traits", json={"traits": [bad]}, headers=h), 422)
        == "unknown_field"
    )
    assert (
        error_code(c.post("/v1/models/acme.t/traits", json={"traits": [{"name": "x"}]}, headers=h), 422)
        == "validation_error"
    )


def test_samples_add_dedupe_all_or_none(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.s"}, headers=h), 201)
    check(
        c.post(
            "/v1/models/acme.s/traits",
            json={"traits": [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]},
            headers=h,
        ),
        201,
    )
    batch = [
        {
            "trait": "formality",
            "text": "  Dear Sir, regards.  ",
            "quality": 1.0,
            "source_url": "https://x.org/1",
        },
        {"trait": "Formality", "text": "yo dude", "quality": 0.0},  # the trait's name works too
    ]
    ids = check(c.post("/v1/models/acme.s/samples", json={"samples": batch}, headers=h), 201)["ids"]
    assert len(ids) == 2
    # Re-import: the same ids, nothing stored twice.
    assert check(c.post("/v1/models/acme.s/samples", json={"samples": batch}, headers=h), 201)["ids"] == ids
    items = check(c.get("/v1/models/acme.s/samples", headers=h), 200)["items"]
    assert [s["id"] for s in items] == ids
    assert items[0]["text"] == "Dear Sir, regards." and items[0]["source_url"] == "https://x.org/1"
    assert items[0]["provenance"] == "authored" and len(items[0]["content_sha256"]) == 64
    assert items[1]["trait"] == "formality" and items[1]["source_url"] is None

    # One bad sample → nothing of the request is stored.
    mixed = [
        {"trait": "formality", "text": "new good text", "quality": 0.7},
        {"trait": "nope", "text": "x", "quality": 0.5},
    ]
    assert (
        error_code(c.post("/v1/models/acme.s/samples", json={"samples": mixed}, headers=h), 422)
        == "unknown_trait"
    )
    assert len(check(c.get("/v1/models/acme.s/samples", headers=h), 200)["items"]) == 2

    def one(**fields: object) -> str:
        sample = {"trait": "formality", "text": "ok", "quality": 0.5, **fields}
        return error_code(c.post("/v1/models/acme.s/samples", json={"samples": [sample]}, headers=h), 422)

    assert one(text="   ") == "empty_text"
    assert one(text="x" * 20_001) == "text_too_long"
    assert one(quality=1.5) == "validation_error"
    assert one(extra=1) == "unknown_field"
    assert (
        error_code(c.post("/v1/models/acme.s/samples", json={"samples": []}, headers=h), 422)
        == "validation_error"
    )
    too_many = [{"trait": "formality", "text": f"text {i}", "quality": 0.5} for i in range(501)]
    assert (
        error_code(c.post("/v1/models/acme.s/samples", json={"samples": too_many}, headers=h), 422)
        == "validation_error"
    )
    check(c.post("/v1/models/acme.s/samples", json={"samples": too_many[:500]}, headers=h), 201)
    # Deleting a trait deletes its samples.
    check(c.delete("/v1/models/acme.s/traits/formality", headers=h), 200)
    assert check(c.get("/v1/models/acme.s", headers=h), 200)["sample_count"] == 0


def test_samples_keep_the_id_of_their_row_in_the_source_file(svc: Svc) -> None:
    """`source_id` (optional): stored as given and listed, so an export joins back to the file; a repeat of
    a stored sample gives it an id it lacks and never changes one it has."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.ids", with_data=False)
    check(c.post("/v1/models/acme.ids/traits", json={"traits": TRAITS[:1]}, headers=h), 201)
    path = "/v1/models/acme.ids/samples"
    batch = [
        {"trait": "formality", "text": "Dear Sir, regards.", "quality": 1.0, "source_id": "213_32"},
        {"trait": "formality", "text": "yo dude", "quality": 0.0},
    ]
    ids = check(c.post(path, json={"samples": batch}, headers=h), 201)["ids"]
    listed = {s["id"]: s["source_id"] for s in check(c.get(path, headers=h), 200)["items"]}
    assert listed == {ids[0]: "213_32", ids[1]: None}
    again = [{**batch[0], "source_id": "another"}, {**batch[1], "source_id": "row 9"}]
    assert check(c.post(path, json={"samples": again}, headers=h), 201)["ids"] == ids
    listed = {s["id"]: s["source_id"] for s in check(c.get(path, headers=h), 200)["items"]}
    assert listed == {ids[0]: "213_32", ids[1]: "row 9"}

    def refused(source_id: object) -> str:
        sample = {"trait": "formality", "text": "new text", "quality": 0.5, "source_id": source_id}
        return error_code(c.post(path, json={"samples": [sample]}, headers=h), 422)

    assert refused("x" * (MAX_SOURCE_ID_CHARS + 1)) == "validation_error"
    assert refused("") == "validation_error"
    assert refused(17) == "validation_error"  # a string, as the OpenAPI document says
    assert len(check(c.get(path, headers=h), 200)["items"]) == 2
    longest = {
        "trait": "formality",
        "text": "new text",
        "quality": 0.5,
        "source_id": "x" * MAX_SOURCE_ID_CHARS,
    }
    check(c.post(path, json={"samples": [longest]}, headers=h), 201)
    assert check(c.get(path, headers=h), 200)["items"][-1]["source_id"] == longest["source_id"]
    item = {"trait": "formality", "text": "held out", "quality": 1.0, "source_id": "7"}
    eval_set = "/v1/models/acme.ids/evaluation-set"
    assert error_code(c.post(eval_set, json={"items": [item]}, headers=h), 422) == "unknown_field"


def test_sample_pages_and_filters(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.pages")
    everything = check(c.get("/v1/models/acme.pages/samples", params={"limit": 500}, headers=h), 200)["items"]
    assert len(everything) == 24
    walked: list[int] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {
            "trait": "sentiment",
            "limit": 5,
            **({"cursor": cursor} if cursor else {}),
        }
        page = check(c.get("/v1/models/acme.pages/samples", params=params, headers=h), 200)
        assert all(s["trait"] == "sentiment" for s in page["items"])
        walked += [s["id"] for s in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(walked) == 12 and walked == sorted(walked)
    first = check(c.get("/v1/models/acme.pages/samples", params={"limit": 5}, headers=h), 200)
    # A cursor of the unfiltered list is foreign to the filtered one.
    resp = c.get(
        "/v1/models/acme.pages/samples",
        params={"trait": "formality", "cursor": first["next_cursor"]},
        headers=h,
    )
    assert error_code(resp, 400) == "invalid_cursor"
    for bad in (0, 501):
        assert (
            error_code(c.get("/v1/models/acme.pages/samples", params={"limit": bad}, headers=h), 422)
            == "validation_error"
        )
    assert (
        check(c.get("/v1/models/acme.pages/samples", params={"provenance": "synthesized"}, headers=h), 200)[
            "items"
        ]
        == []
    )


def test_edits_rejected_on_ready(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.frozen")
    train_ready(c, h, "acme.frozen")
    trait = {"name": "New", "positive_label": "a", "negative_label": "b"}
    sample = {"trait": "formality", "text": "another text", "quality": 1.0}
    for resp in (
        c.post("/v1/models/acme.frozen/traits", json={"traits": [trait]}, headers=h),
        c.patch("/v1/models/acme.frozen/traits/formality", json={"name": "x"}, headers=h),
        c.delete("/v1/models/acme.frozen/traits/formality", headers=h),
        c.post("/v1/models/acme.frozen/samples", json={"samples": [sample]}, headers=h),
        c.post("/v1/models/acme.frozen/traits/discover", json={}, headers=h),
        c.post("/v1/models/acme.frozen/samples/synthesize", json={}, headers=h),
    ):
        assert error_code(resp, 409) == "model_not_draft"
        assert resp.json()["error"]["retryable"] is False
    traits = check(c.get("/v1/models/acme.frozen/traits", headers=h), 200)["traits"]
    formality = traits[0]
    assert formality["sample_count"] == 12 and formality["positive_samples"] == 6
    assert formality["discrimination"] > 0.0
    assert set(formality["anchor_sample_ids"]) == {"positive", "negative"}
    assert len(samples()) == 24
