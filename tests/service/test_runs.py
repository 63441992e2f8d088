"""Background runs: train, retune, no-op, idempotent train, discover, synthesize, duplicates."""

from __future__ import annotations

from sqlalchemy import select

from service.store.schema import Run
from tests.support.service import TRAITS, Svc, check, error_code, make_model, train_ready, wait_settled


def test_first_train_then_noop_then_retune(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.tr")
    model = train_ready(c, h, "acme.tr")
    op = model["last_operation"]
    assert op["kind"] == "train" and op["status"] == "succeeded" and op["error"] is None
    assert op["progress"]["fraction"] == 1.0 and op["progress"]["phase"] == "done" and op["started_at"]
    assert model["version_no"] == 1 and model["current_version_id"] is not None
    v1 = check(c.get("/v1/models/acme.tr/versions/v1", headers=h), 200)
    assert v1["triggered_by"] == "train" and v1["run_id"] == op["run_id"] and v1["sample_count"] == 24
    assert set(v1["metrics"]["traits"]) == {"formality", "sentiment"} and v1["metrics"]["effort"] == "low"
    assert v1["metrics"]["embedder"].startswith("hashing")

    # Ready without reoptimize_params: 200, nothing queued.
    resp = c.post("/v1/models/acme.tr/train", json={}, headers=h)
    assert check(resp, 200) == {"state": "ready", "run_id": None}
    with svc.ctx.sessions() as s:
        assert len(s.scalars(select(Run)).all()) == 1
    # With it: a retune run and v2.
    model = train_ready(c, h, "acme.tr", reoptimize_params=True)
    assert model["version_no"] == 2
    assert check(c.get("/v1/models/acme.tr/versions/v2", headers=h), 200)["triggered_by"] == "retune"


def test_train_preconditions(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.pre"}, headers=h), 201)
    assert error_code(c.post("/v1/models/acme.pre/train", json={}, headers=h), 422) == "no_traits"
    check(
        c.post(
            "/v1/models/acme.pre/traits",
            json={"traits": [{"name": "Tone", "positive_label": "warm", "negative_label": "cold"}]},
            headers=h,
        ),
        201,
    )
    check(
        c.post(
            "/v1/models/acme.pre/samples",
            json={"samples": [{"trait": "tone", "text": "lovely", "quality": 0.9}]},
            headers=h,
        ),
        201,
    )
    resp = c.post("/v1/models/acme.pre/train", json={}, headers=h)
    assert error_code(resp, 422) == "trait_one_pole" and "tone" in resp.json()["error"]["message"]
    assert (
        error_code(c.post("/v1/models/acme.pre/train", json={"effort": "xhigh"}, headers=h), 422)
        == "validation_error"
    )
    assert check(c.get("/v1/models/acme.pre", headers=h), 200)["state"] == "draft"


def test_train_repeat_in_flight_returns_same_run(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.idem")
    first = check(c.post("/v1/models/acme.idem/train", json={}, headers=h), 202)
    again = check(c.post("/v1/models/acme.idem/train", json={"effort": "high"}, headers=h), 202)
    assert again == {"state": "busy", "run_id": first["run_id"]}
    # One queue message, carrying only the run id.
    pending = idle_svc.ctx.huey.pending()
    assert [(t.args, t.kwargs) for t in pending] == [((first["run_id"],), {})]
    busy = check(c.get("/v1/models/acme.idem", headers=h), 200)
    assert busy["state"] == "busy"
    assert busy["last_operation"]["status"] == "queued" and busy["last_operation"]["kind"] == "train"
    assert busy["last_operation"]["progress"]["phase"] == "queued"
    # Edits and other runs while busy: 409 model_busy, retryable, with the run id.
    for resp in (
        c.post("/v1/models/acme.idem/traits/discover", json={}, headers=h),
        c.post(
            "/v1/models/acme.idem/samples",
            json={"samples": [{"trait": "formality", "text": "x", "quality": 1}]},
            headers=h,
        ),
    ):
        assert error_code(resp, 409) == "model_busy"
        assert resp.json()["error"]["retryable"] is True and resp.headers["X-Run-Id"] == first["run_id"]
    # PATCH works while busy.
    check(c.patch("/v1/models/acme.idem", json={"description": "still editable"}, headers=h), 200)
    idle_svc.ctx.executor.execute(first["run_id"])
    model = check(c.get("/v1/models/acme.idem", headers=h), 200)
    assert model["state"] == "ready" and model["version_no"] == 1
    # The task is idempotent: executing a finished run again does nothing.
    idle_svc.ctx.executor.execute(first["run_id"])
    assert len(check(c.get("/v1/models/acme.idem/versions", headers=h), 200)["items"]) == 1


def test_discover_busy_then_draft_and_duplicate(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    make_model(c, h, "acme.disc")
    started = check(c.post("/v1/models/acme.disc/traits/discover", json={"effort": "low"}, headers=h), 202)
    assert started["state"] == "busy"
    model = check(c.get("/v1/models/acme.disc", headers=h), 200)
    assert model["state"] == "busy" and model["last_operation"]["kind"] == "discover"
    # In flight: the same discover again → 409 duplicate_run, not retryable, X-Run-Id.
    resp = c.post("/v1/models/acme.disc/traits/discover", json={"effort": "low"}, headers=h)
    assert error_code(resp, 409) == "duplicate_run"
    assert resp.headers["X-Run-Id"] == started["run_id"]
    idle_svc.ctx.executor.execute(started["run_id"])
    model = check(c.get("/v1/models/acme.disc", headers=h), 200)
    assert model["state"] == "draft" and model["last_operation"]["status"] == "succeeded"
    traits = check(c.get("/v1/models/acme.disc/traits", headers=h), 200)["traits"]
    intrinsic = [t for t in traits if t["kind"] == "intrinsic"]
    assert 1 <= len(intrinsic) <= 3 and [t["key"] for t in traits[:2]] == ["formality", "sentiment"]
    assert all(t["sample_count"] > 0 for t in intrinsic)
    discovered = check(
        c.get("/v1/models/acme.disc/samples", params={"provenance": "discovered", "limit": 500}, headers=h),
        200,
    )["items"]
    assert discovered and {s["trait"] for s in discovered} <= {t["key"] for t in intrinsic}
    # Completed with the same samples and effort → 409 duplicate_run; another effort is a new run.
    resp = c.post("/v1/models/acme.disc/traits/discover", json={"effort": "low"}, headers=h)
    assert error_code(resp, 409) == "duplicate_run"
    assert resp.headers["X-Run-Id"] == started["run_id"] and resp.json()["error"]["retryable"] is False
    other = check(c.post("/v1/models/acme.disc/traits/discover", json={"effort": "medium"}, headers=h), 202)
    assert other["run_id"] != started["run_id"]


def test_synthesize_and_rules(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.syn"}, headers=h), 201)
    assert (
        error_code(c.post("/v1/models/acme.syn/samples/synthesize", json={}, headers=h), 422) == "no_traits"
    )
    check(
        c.post(
            "/v1/models/acme.syn/traits",
            json={"traits": [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]},
            headers=h,
        ),
        201,
    )
    assert (
        error_code(
            c.post("/v1/models/acme.syn/samples/synthesize", json={"synth_type": "enrich"}, headers=h), 422
        )
        == "validation_error"
    )
    assert (
        error_code(
            c.post("/v1/models/acme.syn/samples/synthesize", json={"synth_type": "diversify"}, headers=h), 422
        )
        == "no_samples"
    )
    started = check(c.post("/v1/models/acme.syn/samples/synthesize", json={"effort": "low"}, headers=h), 202)
    model = wait_settled(c, "acme.syn", h)
    assert model["state"] == "draft" and model["last_operation"]["kind"] == "synthesize"
    made = check(c.get("/v1/models/acme.syn/samples", params={"provenance": "synthesized"}, headers=h), 200)
    assert made["items"] and all(s["trait"] == "formality" for s in made["items"])
    resp = c.post("/v1/models/acme.syn/samples/synthesize", json={"effort": "low"}, headers=h)
    assert error_code(resp, 409) == "duplicate_run" and resp.headers["X-Run-Id"] == started["run_id"]
    # Synthesized samples train a model.
    train_ready(c, h, "acme.syn")


def test_failed_discover_returns_to_draft_with_readable_error(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.few"}, headers=h), 201)
    check(c.post("/v1/models/acme.few/traits", json={"traits": TRAITS[:1]}, headers=h), 201)
    check(
        c.post(
            "/v1/models/acme.few/samples",
            json={
                "samples": [
                    {"trait": "formality", "text": "Dear Sir", "quality": 1.0},
                    {"trait": "formality", "text": "yo dude", "quality": 0.0},
                ]
            },
            headers=h,
        ),
        201,
    )
    run_id = check(c.post("/v1/models/acme.few/traits/discover", json={}, headers=h), 202)["run_id"]
    model = wait_settled(c, "acme.few", h)
    op = model["last_operation"]
    assert model["state"] == "draft" and op["run_id"] == run_id and op["status"] == "failed"
    assert op["kind"] == "discover" and op["error"]["code"] and "at least" in op["error"]["message"]
    assert op["finished_at"] is not None
    # A failed run does not block a repeat (fix the data, or just try again).
    assert check(c.post("/v1/models/acme.few/traits/discover", json={}, headers=h), 202)["run_id"] != run_id


def test_trait_count_bounds(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.wide"}, headers=h), 201)
    many = [{"name": f"t{i}", "positive_label": "a", "negative_label": "b"} for i in range(51)]
    assert error_code(c.post("/v1/models/acme.wide/traits", json={"traits": many}, headers=h), 422) == (
        "validation_error"
    )
    check(c.post("/v1/models/acme.wide/traits", json={"traits": many[:50]}, headers=h), 201)
    resp = c.post("/v1/models/acme.wide/traits", json={"traits": many[50:]}, headers=h)
    assert error_code(resp, 422) == "validation_error" and "50" in resp.json()["error"]["message"]
