"""Audit of the spec's rules against the real app: one test per rule that was untested or broken."""

from __future__ import annotations

from sqlalchemy import update

from service.store.schema import Model
from tests.support import factories
from tests.support.service import (
    TRAITS,
    Svc,
    check,
    error_code,
    samples,
    train_ready,
    wait_settled,
)

HUGE_VERSION = "v99999999999999999999"  # past the INTEGER column: comparing used to raise (500)


def test_version_number_past_the_integer_range_is_not_found(svc: Svc) -> None:
    c, h = svc.client, svc.author
    factories.model(svc, "acme.big")
    train_ready(c, h, "acme.big")
    resp = c.get(f"/v1/models/acme.big/versions/{HUGE_VERSION}", headers=h)
    assert error_code(resp, 404) == "version_not_found"
    score = c.post("/v1/models/acme.big/score", json={"content": "hello", "version": HUGE_VERSION}, headers=h)
    assert error_code(score, 404) == "version_not_found"
    assert error_code(c.get("/v1/models/acme.big/versions/v2147483647", headers=h), 404) == (
        "version_not_found"
    )


def test_zero_data_retention_cannot_be_turned_on_mid_run(idle_svc: Svc) -> None:
    """The purge would race the run: a first training that had not read its samples yet would fail."""
    c, h = idle_svc.client, idle_svc.author
    factories.model(idle_svc, "acme.zbusy")
    run_id = check(c.post("/v1/models/acme.zbusy/train", json={"effort": "low"}, headers=h), 202)["run_id"]
    resp = c.patch("/v1/models/acme.zbusy", json={"zero_data_retention": True}, headers=h)
    assert error_code(resp, 409) == "model_busy"
    assert resp.json()["error"]["retryable"] is True and resp.headers["X-Run-Id"] == run_id
    model = check(c.get("/v1/models/acme.zbusy", headers=h), 200)
    assert model["zero_data_retention"] is False and model["sample_count"] == 24
    # Other metadata, and the no-op of setting it off, still work while busy.
    check(
        c.patch("/v1/models/acme.zbusy", json={"zero_data_retention": False, "description": "d"}, headers=h),
        200,
    )
    idle_svc.ctx.executor.execute(run_id)
    assert check(c.get("/v1/models/acme.zbusy", headers=h), 200)["state"] == "ready"
    after = check(c.patch("/v1/models/acme.zbusy", json={"zero_data_retention": True}, headers=h), 200)
    assert after["zero_data_retention"] is True and after["sample_count"] == 0


def test_feedback_is_not_dropped_with_a_text_plain_view(svc: Svc) -> None:
    c, h = svc.client, svc.author
    factories.model(svc, "acme.fbtext")
    train_ready(c, h, "acme.fbtext")
    resp = c.post(
        "/v1/models/acme.fbtext/score",
        json={"content": "Kind regards, the board.", "feedback": [{"trait": "formality", "quality": 1.0}]},
        headers={**h, "Accept": "text/plain"},
    )
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    assert resp.headers["X-Feedback-Buffered"] == "1"
    assert check(c.get("/v1/models/acme.fbtext", headers=h), 200)["buffered_feedback"] == 1


def test_404_never_reveals_a_model_of_another_namespace(svc: Svc) -> None:
    c = svc.client
    factories.model(svc, "acme.hidden")
    train_ready(c, svc.author, "acme.hidden")
    check(c.post("/v1/models/acme.hidden/versions/prod", headers=svc.author), 200)
    trait = {"name": "X", "positive_label": "a", "negative_label": "b"}
    sample = {"trait": "formality", "text": "t", "quality": 1.0}
    calls: list[tuple[str, str, dict[str, object] | None]] = [
        ("GET", "", None),
        ("PATCH", "", {"description": "x"}),
        ("DELETE", "", None),
        ("GET", "/traits", None),
        ("POST", "/traits", {"traits": [trait]}),
        ("PATCH", "/traits/formality", {"name": "y"}),
        ("DELETE", "/traits/formality", None),
        ("GET", "/samples", None),
        ("POST", "/samples", {"samples": [sample]}),
        ("POST", "/train", {}),
        ("POST", "/traits/discover", {}),
        ("POST", "/samples/synthesize", {}),
        ("GET", "/versions", None),
        ("GET", "/versions/v1", None),
        ("GET", "/versions/prod", None),
        ("POST", "/versions/prod", None),
        ("DELETE", "/versions/prod", None),
        ("POST", "/score", {"content": "hello"}),
        ("POST", "/score/compare", {"a": "x", "b": "y"}),
    ]
    for method, suffix, body in calls:
        seen = []
        for handle in ("acme.hidden", "acme.absent"):
            resp = c.request(method, f"/v1/models/{handle}{suffix}", json=body, headers=svc.other)
            err = resp.json()["error"]
            seen.append((resp.status_code, err["code"], err["message"].replace(handle, "<h>")))
        assert seen[0] == seen[1] == (404, "model_not_found", seen[0][2]), (method, suffix, seen)
    # Creating in a namespace the key does not own is 403 whether or not the handle exists.
    for handle in ("acme.hidden", "acme.absent"):
        assert (
            error_code(c.post("/v1/models", json={"handle": handle}, headers=svc.other), 403) == "forbidden"
        )
    assert check(c.get("/v1/models/acme.hidden", headers=svc.author), 200)["state"] == "ready"


def test_malformed_json_is_a_422_envelope_on_every_json_endpoint(svc: Svc) -> None:
    c, h = svc.client, svc.author
    factories.model(svc, "acme.badjson")
    bad = {**h, "Content-Type": "application/json", "X-Request-Id": "audit-json"}
    for method, path in (
        ("POST", "/v1/models"),
        ("PATCH", "/v1/models/acme.badjson"),
        ("POST", "/v1/models/acme.badjson/traits"),
        ("PATCH", "/v1/models/acme.badjson/traits/formality"),
        ("POST", "/v1/models/acme.badjson/samples"),
        ("POST", "/v1/models/acme.badjson/train"),
        ("POST", "/v1/models/acme.badjson/traits/discover"),
        ("POST", "/v1/models/acme.badjson/samples/synthesize"),
        ("POST", "/v1/models/acme.badjson/score"),
        ("POST", "/v1/models/acme.badjson/score/compare"),
    ):
        for content in (b'{"handle": ', b'{"x": "\xff"}'):
            resp = c.request(method, path, content=content, headers=bad)
            assert error_code(resp, 422) == "validation_error", (method, path, content)
            assert resp.headers["X-Request-Id"] == "audit-json"
    # Nothing changed.
    assert check(c.get("/v1/models/acme.badjson", headers=h), 200)["state"] == "draft"


def test_method_not_allowed_without_a_key_is_an_envelope_with_the_request_id(svc: Svc) -> None:
    resp = svc.client.delete("/v1/models", headers={"X-Request-Id": "audit-405"})
    assert error_code(resp, 405) == "method_not_allowed"
    assert resp.headers["X-Request-Id"] == "audit-405" and resp.headers["Allow"] == "GET, POST"


def test_namespace_public_lists_the_catalog_from_any_key(svc: Svc) -> None:
    c = svc.client
    check(c.post("/v1/models", json={"handle": "public.cat"}, headers=svc.publisher), 201)
    check(c.post("/v1/models", json={"handle": "acme.private"}, headers=svc.author), 201)
    for headers in (svc.author, svc.scorer, svc.other):
        for params in ({}, {"namespace": "public"}):
            listed = check(c.get("/v1/models", params=params, headers=headers), 200)
            assert [m["handle"] for m in listed["items"]] == ["public.cat"], params


def test_sample_list_default_page_is_100(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.hundred"}, headers=h), 201)
    check(c.post("/v1/models/acme.hundred/traits", json={"traits": TRAITS[:1]}, headers=h), 201)
    many = [{"trait": "formality", "text": f"text number {i}", "quality": i % 2} for i in range(130)]
    check(c.post("/v1/models/acme.hundred/samples", json={"samples": many}, headers=h), 201)
    first = check(c.get("/v1/models/acme.hundred/samples", headers=h), 200)
    assert first["limit"] == 100 and len(first["items"]) == 100 and first["next_cursor"]
    rest = check(
        c.get("/v1/models/acme.hundred/samples", params={"cursor": first["next_cursor"]}, headers=h), 200
    )
    assert len(rest["items"]) == 30 and rest["next_cursor"] is None


def test_a_cursor_whose_last_item_was_deleted_still_pages_on(svc: Svc) -> None:
    """Stale, not forged: keyset cursors keep working after the rows they point at are gone."""
    c, h = svc.client, svc.author
    factories.model(svc, "acme.stale")
    page = check(c.get("/v1/models/acme.stale/samples", params={"limit": 12}, headers=h), 200)
    assert {s["trait"] for s in page["items"]} == {"formality"}
    check(c.delete("/v1/models/acme.stale/traits/formality", headers=h), 200)  # deletes its samples
    rest = check(
        c.get(
            "/v1/models/acme.stale/samples", params={"limit": 12, "cursor": page["next_cursor"]}, headers=h
        ),
        200,
    )
    assert len(rest["items"]) == 12 and {s["trait"] for s in rest["items"]} == {"sentiment"}
    for i in range(3):
        check(c.post("/v1/models", json={"handle": f"acme.page{i}"}, headers=h), 201)
    models = check(c.get("/v1/models", params={"namespace": "acme", "limit": 2}, headers=h), 200)
    check(c.delete(f"/v1/models/{models['items'][-1]['handle']}", headers=h), 200)
    tail = check(
        c.get(
            "/v1/models", params={"namespace": "acme", "limit": 2, "cursor": models["next_cursor"]}, headers=h
        ),
        200,
    )
    assert tail["items"] and all(m["state"] != "archived" for m in tail["items"])


def test_synthesize_repeat_in_flight_is_a_duplicate(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    factories.model(idle_svc, "acme.synfly")
    started = check(
        c.post("/v1/models/acme.synfly/samples/synthesize", json={"effort": "low"}, headers=h), 202
    )
    model = check(c.get("/v1/models/acme.synfly", headers=h), 200)
    assert model["state"] == "busy" and model["last_operation"]["kind"] == "synthesize"
    resp = c.post("/v1/models/acme.synfly/samples/synthesize", json={"effort": "low"}, headers=h)
    assert error_code(resp, 409) == "duplicate_run"
    assert resp.headers["X-Run-Id"] == started["run_id"] and resp.json()["error"]["retryable"] is False
    # Another synth_type is not a repeat; the model is busy, so that is model_busy (retryable).
    other = c.post(
        "/v1/models/acme.synfly/samples/synthesize",
        json={"effort": "low", "synth_type": "diversify"},
        headers=h,
    )
    assert error_code(other, 409) == "model_busy" and other.json()["error"]["retryable"] is True
    idle_svc.ctx.executor.execute(started["run_id"])
    assert check(c.get("/v1/models/acme.synfly", headers=h), 200)["state"] == "draft"


def test_discover_and_synthesize_return_a_failed_model_to_failed(svc: Svc) -> None:
    """docs/api.md: discover and synthesize go back to the state they came from (draft or failed)."""
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.fail"}, headers=h), 201)
    check(c.post("/v1/models/acme.fail/traits", json={"traits": TRAITS}, headers=h), 201)
    check(c.post("/v1/models/acme.fail/samples", json={"samples": samples()}, headers=h), 201)
    with svc.ctx.sessions() as s, s.begin():  # as a failed first training leaves it (see test_recovery)
        s.execute(update(Model).where(Model.handle == "acme.fail").values(state="failed"))
    check(c.post("/v1/models/acme.fail/traits/discover", json={"effort": "low"}, headers=h), 202)
    model = wait_settled(c, "acme.fail", h)
    assert model["state"] == "failed" and model["last_operation"]["status"] == "succeeded"
    assert any(
        t["kind"] == "intrinsic"
        for t in check(c.get("/v1/models/acme.fail/traits", headers=h), 200)["traits"]
    )
    check(c.post("/v1/models/acme.fail/samples/synthesize", json={"effort": "low"}, headers=h), 202)
    assert wait_settled(c, "acme.fail", h)["state"] == "failed"
    train_ready(c, h, "acme.fail")


def test_zero_data_retention_model_cannot_be_retuned(svc: Svc) -> None:
    """Its samples are purged when training completes and a ready model takes no new ones."""
    c, h = svc.client, svc.author
    factories.model(svc, "acme.zretune", zero_data_retention=True)
    train_ready(c, h, "acme.zretune")
    resp = c.post("/v1/models/acme.zretune/train", json={"reoptimize_params": True}, headers=h)
    assert error_code(resp, 422) == "trait_one_pole"
    assert check(c.post("/v1/models/acme.zretune/train", json={}, headers=h), 200) == {
        "state": "ready",
        "run_id": None,
    }
    model = check(c.get("/v1/models/acme.zretune", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1


def test_discover_respects_the_trait_cap(svc: Svc) -> None:
    """At most 50 traits per model: discovery used to attach its 3 on top of a full model (53)."""
    c, h = svc.client, svc.author
    factories.model(svc, "acme.cap")
    filler = [{"name": f"filler {i}", "positive_label": "a", "negative_label": "b"} for i in range(47)]
    check(c.post("/v1/models/acme.cap/traits", json={"traits": filler}, headers=h), 201)
    check(c.post("/v1/models/acme.cap/traits/discover", json={"effort": "low"}, headers=h), 202)
    model = wait_settled(c, "acme.cap", h)
    assert model["state"] == "draft" and model["last_operation"]["status"] == "succeeded"
    assert len(model["traits"]) == 50  # 49 + the one discovered trait there was room for
    resp = c.post("/v1/models/acme.cap/traits/discover", json={"effort": "high"}, headers=h)
    assert error_code(resp, 422) == "validation_error" and "50" in resp.json()["error"]["message"]
    assert len(check(c.get("/v1/models/acme.cap/traits", headers=h), 200)["traits"]) == 50
