"""Buffered score feedback: the owner lists it and withdraws a label before retraining takes it.

retrain_buffer is 3 in the test settings (tests/service/conftest.py).
"""

from __future__ import annotations

from typing import Any

from tests.support.service import Svc, check, error_code, make_model, train_ready, wait_settled


def _feedback(svc: Svc, handle: str, text: str, quality: float, trait: str = "formality") -> None:
    body = {"content": text, "feedback": [{"trait": trait, "quality": quality}]}
    check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=svc.author), 200)


def _buffer(svc: Svc, handle: str, **params: Any) -> dict[str, Any]:
    page: dict[str, Any] = check(
        svc.client.get(f"/v1/models/{handle}/feedback", params=params, headers=svc.author), 200
    )
    return page


def test_the_owner_lists_the_buffer_and_withdraws_a_label_before_it_trains(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.fb")
    train_ready(c, h, "acme.fb")
    page = _buffer(svc, "acme.fb")
    assert (page["items"], page["buffered"], page["retrain_at"]) == ([], 0, 3)
    _feedback(svc, "acme.fb", "Yours sincerely, the board.", 1.0)
    _feedback(svc, "acme.fb", "oops, a label sent by mistake", 1.0)
    page = _buffer(svc, "acme.fb")
    assert page["buffered"] == 2 and page["retrain_at"] == 3 and page["next_cursor"] is None
    assert [(i["trait"], i["text"], i["quality"]) for i in page["items"]] == [
        ("formality", "Yours sincerely, the board.", 1.0),
        ("formality", "oops, a label sent by mistake", 1.0),
    ]
    first = _buffer(svc, "acme.fb", limit=1)  # keyset pages
    assert len(first["items"]) == 1 and first["next_cursor"]
    rest = _buffer(svc, "acme.fb", limit=1, cursor=first["next_cursor"])
    assert [i["id"] for i in first["items"] + rest["items"]] == [i["id"] for i in page["items"]]

    mistake = page["items"][1]["id"]
    out = check(c.delete(f"/v1/models/acme.fb/feedback/{mistake}", headers=h), 200)
    assert out == {"handle": "acme.fb", "id": mistake, "deleted": True, "buffered": 1}
    assert (
        error_code(c.delete(f"/v1/models/acme.fb/feedback/{mistake}", headers=h), 404) == "feedback_not_found"
    )
    assert check(c.get("/v1/models/acme.fb", headers=h), 200)["buffered_feedback"] == 1

    # Two more labels fill the buffer (3): the retraining trains on them, never on the one withdrawn.
    _feedback(svc, "acme.fb", "We remain at your disposal.", 1.0)
    _feedback(svc, "acme.fb", "lol ok", 0.0)
    model = wait_settled(c, "acme.fb", h)
    assert model["version_no"] == 2 and model["buffered_feedback"] == 0
    fed = check(c.get("/v1/models/acme.fb/samples", params={"provenance": "feedback"}, headers=h), 200)
    texts = {s["text"] for s in fed["items"]}
    assert texts == {"Yours sincerely, the board.", "We remain at your disposal.", "lol ok"}
    assert _buffer(svc, "acme.fb")["items"] == []


def test_withdrawing_refuses_what_is_not_this_model_s_buffer_and_a_retraining_in_flight(
    idle_svc: Svc,
) -> None:
    svc = idle_svc
    c, h = svc.client, svc.author
    for handle in ("acme.one", "acme.two"):
        make_model(c, h, handle)
        started = check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}, headers=h), 202)
        svc.ctx.executor.execute(started["run_id"])
    _feedback(svc, "acme.one", "Kind regards, the team.", 1.0)
    _feedback(svc, "acme.two", "Best wishes to all of you.", 1.0)
    [one] = _buffer(svc, "acme.one")["items"]
    [two] = _buffer(svc, "acme.two")["items"]
    for bad in (two["id"], 0, -1, 2**63, 10**30):  # another model's label, ids that cannot exist
        resp = c.delete(f"/v1/models/acme.one/feedback/{bad}", headers=h)
        assert resp.status_code in (404, 422), resp.text
        if resp.status_code == 404:
            assert error_code(resp, 404) in ("feedback_not_found", "not_found")
    assert _buffer(svc, "acme.two")["buffered"] == 1 and _buffer(svc, "acme.one")["buffered"] == 1
    assert error_code(c.get("/v1/models/acme.one/feedback", params={"cursor": "forged.x"}, headers=h), 400)
    # A retraining queued (busy): it will read the buffer, so nothing is withdrawn until it ends.
    _feedback(svc, "acme.one", "With our compliments.", 1.0)
    _feedback(svc, "acme.one", "Respectfully submitted.", 1.0)
    assert check(c.get("/v1/models/acme.one", headers=h), 200)["state"] == "busy"
    resp = c.delete(f"/v1/models/acme.one/feedback/{one['id']}", headers=h)
    assert error_code(resp, 409) == "model_busy" and resp.headers.get("X-Run-Id")
    assert _buffer(svc, "acme.one")["buffered"] == 3
