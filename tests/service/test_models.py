"""Models: create, get, list (bounds, cursors, filters), PATCH rules, DELETE."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from tests.support.service import Svc, check, error_code, make_model, train_ready, wait_settled


def test_create_defaults_and_echo(svc: Svc) -> None:
    body = {
        "handle": "acme.tone",
        "description": "tone of voice",
        "max_depth": 3,
        "additional_terms": "terms",
        "upstream_sources": [{"url": "https://example.org/data", "title": "Data"}],
        "readme_markdown": "# Tone",
    }
    model = check(svc.client.post("/v1/models", json=body, headers=svc.author), 201)
    assert model["state"] == "draft"
    assert model["scoring_method"] == "balanced_cosine" and model["kind"] == "scoring"
    assert model["traits"] == [] and model["version_tags"] == []
    assert model["current_version_id"] is None and model["version_no"] is None
    assert model["last_operation"] is None and model["zero_data_retention"] is False
    assert model["max_depth"] == 3 and model["readme_markdown"] == "# Tone"
    assert model["upstream_sources"] == [
        {"url": "https://example.org/data", "title": "Data", "license": None}
    ]
    assert check(svc.client.get("/v1/models/acme.tone", headers=svc.author), 200) == model


def test_create_rejections(svc: Svc) -> None:
    c, h = svc.client, svc.author
    assert error_code(c.post("/v1/models", json={"handle": "other.x"}, headers=h), 403) == "forbidden"
    assert error_code(c.post("/v1/models", json={"handle": "Acme.X"}, headers=h), 422) == "validation_error"
    assert error_code(c.post("/v1/models", json={"handle": "acme.a.b"}, headers=h), 422) == "validation_error"
    assert (
        error_code(c.post("/v1/models", json={"handle": "acme.x", "kind": "retrieval"}, headers=h), 422)
        == "validation_error"
    )
    assert (
        error_code(c.post("/v1/models", json={"handle": "acme.x", "max_depth": 9}, headers=h), 422)
        == "validation_error"
    )
    assert (
        error_code(c.post("/v1/models", json={"handle": "acme.x", "bogus": 1}, headers=h), 422)
        == "unknown_field"
    )
    assert error_code(c.post("/v1/models", json={"handle": "acme.x"}, headers=svc.scorer), 403) == "forbidden"
    check(c.post("/v1/models", json={"handle": "acme.x"}, headers=h), 201)
    assert error_code(c.post("/v1/models", json={"handle": "acme.x"}, headers=h), 409) == "handle_taken"
    check(c.delete("/v1/models/acme.x", headers=h), 200)
    # Handles are never reused, even once archived.
    assert error_code(c.post("/v1/models", json={"handle": "acme.x"}, headers=h), 409) == "handle_taken"


def test_list_pages_bounds_and_filters(svc: Svc) -> None:
    c, h = svc.client, svc.author
    for i in range(7):
        check(c.post("/v1/models", json={"handle": f"acme.m{i}"}, headers=h), 201)
    check(c.post("/v1/models", json={"handle": "lab.elsewhere"}, headers=h), 201)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, str | int] = {
            "namespace": "acme",
            "limit": 3,
            **({"cursor": cursor} if cursor else {}),
        }
        page = check(c.get("/v1/models", params=params, headers=h), 200)
        assert page["limit"] == 3 and len(page["items"]) <= 3
        seen += [m["handle"] for m in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and seen == [f"acme.m{i}" for i in range(7)]

    for bad in (0, 251):
        assert (
            error_code(c.get("/v1/models", params={"namespace": "acme", "limit": bad}, headers=h), 422)
            == "validation_error"
        )
    assert (
        len(check(c.get("/v1/models", params={"namespace": "acme", "limit": 250}, headers=h), 200)["items"])
        == 7
    )
    assert check(c.get("/v1/models", params={"namespace": "acme"}, headers=h), 200)["limit"] == 50

    # Cursors: forged, malformed, and from another list → 400 invalid_cursor in the envelope.
    first = check(c.get("/v1/models", params={"namespace": "acme", "limit": 2}, headers=h), 200)
    good = first["next_cursor"]
    forged = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    for bad_cursor in (forged, "not-a-cursor", "x.y"):
        resp = c.get("/v1/models", params={"namespace": "acme", "cursor": bad_cursor}, headers=h)
        assert error_code(resp, 400) == "invalid_cursor"
    foreign = c.get("/v1/models", params={"namespace": "acme", "state": "draft", "cursor": good}, headers=h)
    assert error_code(foreign, 400) == "invalid_cursor"

    # Filters: state and kind; archived only with state=archived.
    check(c.delete("/v1/models/acme.m0", headers=h), 200)
    drafts = check(c.get("/v1/models", params={"namespace": "acme", "state": "draft"}, headers=h), 200)
    assert [m["handle"] for m in drafts["items"]] == [f"acme.m{i}" for i in range(1, 7)]
    default = check(c.get("/v1/models", params={"namespace": "acme"}, headers=h), 200)
    assert "acme.m0" not in [m["handle"] for m in default["items"]]
    archived = check(c.get("/v1/models", params={"namespace": "acme", "state": "archived"}, headers=h), 200)
    assert [m["handle"] for m in archived["items"]] == ["acme.m0"]
    assert (
        check(c.get("/v1/models", params={"namespace": "acme", "kind": "classification"}, headers=h), 200)[
            "items"
        ]
        == []
    )
    assert (
        len(
            check(c.get("/v1/models", params={"namespace": "acme", "kind": "scoring"}, headers=h), 200)[
                "items"
            ]
        )
        == 6
    )
    assert error_code(c.get("/v1/models", params={"state": "sleeping"}, headers=h), 422) == "validation_error"
    # Namespace must be owned.
    assert error_code(c.get("/v1/models", params={"namespace": "other"}, headers=h), 403) == "forbidden"


def test_patch_rules(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.p"}, headers=h), 201)
    assert (
        error_code(c.patch("/v1/models/acme.p", json={"state": "ready"}, headers=h), 422)
        == "state_not_patchable"
    )
    for field, value in (
        ("handle", "acme.q"),
        ("kind", "scoring"),
        ("scoring_method", "x"),
        ("max_depth", 2),
    ):
        assert (
            error_code(c.patch("/v1/models/acme.p", json={field: value}, headers=h), 422) == "immutable_field"
        )
    assert error_code(c.patch("/v1/models/acme.p", json={"color": "red"}, headers=h), 422) == "unknown_field"
    assert (
        error_code(c.patch("/v1/models/acme.p", json={"auto_prune": {"keep_unnamed": -1}}, headers=h), 422)
        == "validation_error"
    )

    model = check(
        c.patch(
            "/v1/models/acme.p",
            json={"description": "new", "readme_markdown": "R", "auto_prune": {"keep_unnamed": 5}},
            headers=h,
        ),
        200,
    )
    assert model["description"] == "new" and model["readme_markdown"] == "R"
    assert model["auto_prune"] == {"keep_unnamed": 5, "keep_first_of_month": True}
    assert model["state"] == "draft"
    # Omitted fields unchanged; null clears the override.
    model = check(c.patch("/v1/models/acme.p", json={"auto_prune": None}, headers=h), 200)
    assert model["auto_prune"] is None and model["description"] == "new"
    model = check(
        c.patch("/v1/models/acme.p", json={"auto_prune": {"keep_first_of_month": False}}, headers=h), 200
    )
    assert model["auto_prune"] == {"keep_unnamed": 100, "keep_first_of_month": False}

    check(c.delete("/v1/models/acme.p", headers=h), 200)
    assert (
        error_code(c.patch("/v1/models/acme.p", json={"description": "x"}, headers=h), 409)
        == "model_archived"
    )


def test_delete_from_states(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.d"}, headers=h), 201)
    assert check(c.delete("/v1/models/acme.d", headers=h), 200) == {"handle": "acme.d", "deleted": True}
    assert check(c.delete("/v1/models/acme.d", headers=h), 200) == {"handle": "acme.d", "deleted": False}
    archived = check(c.get("/v1/models/acme.d", headers=h), 200)
    assert archived["state"] == "archived"
    # Archived: reads only.
    assert error_code(c.post("/v1/models/acme.d/train", json={}, headers=h), 409) == "model_archived"
    assert (
        error_code(
            c.post(
                "/v1/models/acme.d/traits",
                json={"traits": [{"name": "x", "positive_label": "a", "negative_label": "b"}]},
                headers=h,
            ),
            409,
        )
        == "model_archived"
    )

    make_model(c, h, "acme.r")
    train_ready(c, h, "acme.r")
    check(c.post("/v1/versions", headers=h), 404)
    assert check(c.delete("/v1/models/acme.r", headers=h), 200)["deleted"] is True
    assert (
        error_code(c.post("/v1/models/acme.r/score", json={"content": "hello"}, headers=h), 409)
        == "model_archived"
    )
    versions = check(c.get("/v1/models/acme.r/versions", headers=h), 200)
    assert [v["version_no"] for v in versions["items"]] == [1]


def test_delete_busy_is_rejected(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.b")
    run_id = check(c.post("/v1/models/acme.b/train", json={}, headers=h), 202)["run_id"]
    resp = c.delete("/v1/models/acme.b", headers=h)
    assert error_code(resp, 409) == "model_busy"
    assert resp.json()["error"]["retryable"] is True and resp.headers["X-Run-Id"] == run_id
    idle_svc.ctx.executor.execute(run_id)
    assert wait_settled(c, "acme.b", h)["state"] == "ready"
    assert check(c.delete("/v1/models/acme.b", headers=h), 200)["deleted"] is True


def _count_queries(svc: Svc, url: str) -> tuple[int, dict[str, Any]]:
    """SQL statements the app runs to answer one GET (auth included)."""
    statements: list[str] = []

    def record(*args: object) -> None:
        statements.append(str(args[2]))

    event.listen(svc.ctx.engine, "before_cursor_execute", record)
    try:
        body = check(svc.client.get(url, headers=svc.author), 200)
    finally:
        event.remove(svc.ctx.engine, "before_cursor_execute", record)
    return len(statements), body


def test_listing_queries_do_not_grow_with_the_page(svc: Svc) -> None:
    """No N+1: traits, version numbers, tags, counts and last runs are loaded for the whole page at once."""
    c, h = svc.client, svc.author
    for handle in ("acme.q1", "acme.q2"):
        make_model(c, h, handle)
        train_ready(c, h, handle)
        check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)
    small, page = _count_queries(svc, "/v1/models?namespace=acme")
    assert [m["handle"] for m in page["items"]] == ["acme.q1", "acme.q2"]
    for i in range(3, 9):
        make_model(c, h, f"acme.q{i}", with_data=i % 2 == 0)
    train_ready(c, h, "acme.q4")
    check(c.post("/v1/models/acme.q4/versions/prod", headers=h), 200)
    large, page = _count_queries(svc, "/v1/models?namespace=acme")
    assert len(page["items"]) == 8 and large == small
    items = {m["handle"]: m for m in page["items"]}
    # The batched bodies are the same as the one-model GET.
    for handle in ("acme.q1", "acme.q3", "acme.q4", "acme.q5"):
        assert items[handle] == check(c.get(f"/v1/models/{handle}", headers=h), 200)
    assert items["acme.q4"]["version_tags"] == ["prod"] and items["acme.q4"]["traits"] == [
        "Formality",
        "Sentiment",
    ]
    assert items["acme.q4"]["last_operation"]["status"] == "succeeded"
    assert items["acme.q4"]["sample_count"] == 24 and items["acme.q5"]["sample_count"] == 0
