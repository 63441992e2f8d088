"""POST /models/{h}/reopen (docs/api.md, "Reopen"): a trained model back to draft while its version serves."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from service.store import ledger
from service.store.db import transaction
from service.store.schema import Model
from tests.support import factories
from tests.support.service import Svc, check, error_code, train_ready, wait_settled

TEXT = "Dear Sir, kindly find the report attached."
ANALYZE = "/v1alpha1/comments:analyze"


def _served(svc: Svc, handle: str) -> dict[str, Any]:
    """What the active version answers: native scores, a comparison and Perspective's analyze."""
    c, h = svc.client, svc.author
    score = check(c.post(f"/v1/models/{handle}/score", json={"content": TEXT}, headers=h), 200)
    compare = check(
        c.post(f"/v1/models/{handle}/score/compare", json={"a": TEXT, "b": "yo lol"}, headers=svc.scorer), 200
    )
    key = svc.scorer["Authorization"].removeprefix("Bearer ")
    body = {"comment": {"text": TEXT}, "requestedAttributes": {"FORMALITY": {}}, "model": handle}
    analyze = check(c.post(f"{ANALYZE}?key={key}", json=body), 200)
    return {
        "version": (score["version_no"], score["version_tags"], compare["version_no"]),
        "score": [s["score"] for s in score["scores"]],
        "delta": [d["delta"] for d in compare["difference"]],
        "analyze": analyze["attributeScores"]["FORMALITY"]["summaryScore"]["value"],
    }


def _close(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["version"] == b["version"]
    for key in ("score", "delta"):
        assert a[key] == pytest.approx(b[key], abs=1e-9)
    assert a["analyze"] == pytest.approx(b["analyze"], abs=1e-9)


def _events(svc: Svc, handle: str) -> list[tuple[str, int, int | None]]:
    body = check(svc.client.get(f"/v1/models/{handle}/history", headers=svc.scorer), 200)
    return [(e["kind"], e["version_no"], e["previous_version_no"]) for e in body["events"]]


def test_reopen_edit_and_train_the_next_version(svc: Svc) -> None:
    c, h, m = svc.client, svc.author, "/v1/models/acme.loop"
    factories.model(svc, "acme.loop")
    train_ready(c, h, "acme.loop")
    check(c.post(f"{m}/versions/prod", headers=h), 200)
    before = _served(svc, "acme.loop")
    first, second = check(c.get(f"{m}/samples", headers=h), 200)["items"][:2]

    model = check(c.post(f"{m}/reopen", headers=h), 200)
    assert model["state"] == "draft" and model["version_no"] == 1 and model["version_tags"] == ["prod"]
    op = model["last_operation"]
    assert op["kind"] == "reopen" and op["status"] == "succeeded" and op["run_id"].startswith("run_")
    assert "v1 keeps serving" in op["progress"]["message"]
    assert _events(svc, "acme.loop")[-1] == ("reopened", 1, None)
    _close(_served(svc, "acme.loop"), before)  # the version serves exactly as before

    # A repeat answers the draft unchanged and records nothing.
    again = check(c.post(f"{m}/reopen", headers=h), 200)
    assert again["last_operation"]["run_id"] == op["run_id"] and len(_events(svc, "acme.loop")) == 3

    # Every draft edit works: sample PATCH and DELETE, new samples, a trait edit.
    patched = check(
        c.patch(f"{m}/samples/{first['id']}", json={"text": "Yours sincerely, the board."}, headers=h), 200
    )
    assert patched["text"] == "Yours sincerely, the board." and patched["provenance"] == "authored"
    check(c.delete(f"{m}/samples/{second['id']}", headers=h), 200)
    new = [{"trait": "formality", "text": "We hereby acknowledge your letter.", "quality": 1.0}]
    check(c.post(f"{m}/samples", json={"samples": new}, headers=h), 201)
    check(
        c.patch(f"{m}/traits/sentiment", json={"description": "How happy the writer sounds."}, headers=h), 200
    )

    # Feedback is buffered, nothing is lost, and no automatic retraining starts (the buffer is 3 here).
    for quality, text in ((1.0, "With kind regards, the office."), (0.0, "sup dude"), (1.0, TEXT)):
        fb = {"content": text, "feedback": [{"trait": "formality", "quality": quality}]}
        assert check(c.post(f"{m}/score", json=fb, headers=h), 200)["feedback_buffered"] == 1
    model = check(c.get(m, headers=h), 200)
    assert model["state"] == "draft" and model["buffered_feedback"] == 3 and model["sample_count"] == 24

    started = check(c.post(f"{m}/train", json={"effort": "low"}, headers=h), 202)
    model = wait_settled(c, "acme.loop", h)
    assert model["state"] == "ready" and model["version_no"] == 2 and model["buffered_feedback"] == 0
    assert model["last_operation"]["run_id"] == started["run_id"]
    v2 = check(c.get(f"{m}/versions/v2", headers=h), 200)
    assert v2["triggered_by"] == "train" and v2["sample_count"] == 27  # 24 samples and the 3 labels
    fed = check(c.get(f"{m}/samples", params={"provenance": "feedback"}, headers=h), 200)["items"]
    assert sorted(s["text"] for s in fed) == sorted(["With kind regards, the office.", "sup dude", TEXT])
    assert _events(svc, "acme.loop")[-1] == ("activated", 2, 1)
    assert check(c.get(f"{m}/versions/prod", headers=h), 200)["version_no"] == 1  # tags stay put

    # The rules of `ready` are as they were: edits are refused, train is the no-op.
    refused = c.patch(f"{m}/samples/{patched['id']}", json={"quality": 0.0}, headers=h)
    assert error_code(refused, 409) == "model_not_draft" and "reopen" in refused.json()["error"]["message"]
    noop = c.post(f"{m}/train", json={}, headers=h)
    assert noop.status_code == 200 and noop.json() == {"state": "ready", "run_id": None}


def test_reopen_refusals_and_untrained_models(idle_svc: Svc) -> None:
    c, h = idle_svc.client, idle_svc.author
    factories.model(idle_svc, "acme.fresh")
    fresh = check(c.post("/v1/models/acme.fresh/reopen", headers=h), 200)
    assert fresh["state"] == "draft" and fresh["last_operation"] is None  # nothing to reopen

    run_id = check(c.post("/v1/models/acme.fresh/train", json={"effort": "low"}, headers=h), 202)["run_id"]
    busy = c.post("/v1/models/acme.fresh/reopen", headers=h)
    assert error_code(busy, 409) == "model_busy" and busy.headers["X-Run-Id"] == run_id
    assert busy.json()["error"]["retryable"] is True

    # A first training that fails makes the model `failed`; reopen makes it a plain draft.
    with transaction(idle_svc.ctx.sessions) as s:
        assert ledger.fail(s, run_id, None, "internal_error", "made to fail by the test")
    assert check(c.get("/v1/models/acme.fresh", headers=h), 200)["state"] == "failed"
    model = check(c.post("/v1/models/acme.fresh/reopen", headers=h), 200)
    assert model["state"] == "draft" and model["last_operation"]["kind"] == "reopen"
    assert _events(idle_svc, "acme.fresh") == []  # no version: no history

    check(c.delete("/v1/models/acme.fresh", headers=h), 200)
    assert error_code(c.post("/v1/models/acme.fresh/reopen", headers=h), 409) == "model_archived"


def test_a_failed_run_leaves_the_reopened_draft_editable(svc: Svc) -> None:
    c, h, m = svc.client, svc.author, "/v1/models/acme.retry"
    factories.model(svc, "acme.retry")
    train_ready(c, h, "acme.retry")
    items = [
        {"trait": "formality", "text": TEXT, "quality": 1.0},
        {"trait": "formality", "text": "k", "quality": 0},
    ]
    check(c.post(f"{m}/evaluation-set", json={"items": items}, headers=h), 201)
    check(c.post(f"{m}/reopen", headers=h), 200)
    # An evaluation of the serving version returns the model to the draft, not to `ready`.
    check(c.post(f"{m}/versions/v1/evaluate", headers=h), 202)
    assert wait_settled(c, "acme.retry", h)["state"] == "draft"
    # A training that fails for good (as when its worker dies every time) leaves the draft, v1 serving.
    # (Queued and failed in one transaction, never enqueued: the running worker cannot race the test.)
    with transaction(svc.ctx.sessions) as s:
        model = s.scalars(select(Model).where(Model.handle == "acme.retry")).one()
        run = ledger.create_run(s, model, "train", {"effort": "low", "triggered_by": "train"})
        assert ledger.fail(s, run.id, None, "worker_lost", "made to fail by the test")
    model = check(c.get(m, headers=h), 200)
    assert model["state"] == "draft" and model["version_no"] == 1
    assert model["last_operation"]["status"] == "failed"
    check(c.post(f"{m}/samples", json={"samples": items}, headers=h), 201)


def test_zero_data_retention_reopens_empty(svc: Svc) -> None:
    c, h, m = svc.client, svc.author, "/v1/models/acme.secret"
    factories.model(svc, "acme.secret", zero_data_retention=True)
    train_ready(c, h, "acme.secret")
    model = check(c.post(f"{m}/reopen", headers=h), 200)
    assert model["state"] == "draft" and model["sample_count"] == 0
    assert "starts empty" in model["last_operation"]["progress"]["message"]
    assert error_code(c.post(f"{m}/train", json={}, headers=h), 422) == "trait_one_pole"
    assert check(c.post(f"{m}/score", json={"content": TEXT}, headers=h), 200)["version_no"] == 1
