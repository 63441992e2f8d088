"""No read blocks a write (core.model_states.TRANSITIONS["label"]): while a run that reads a version (an
evaluation) keeps the model busy, a team's labels, reviews, settles, corrections and withdrawals are taken;
only a run that reads the labels (a training) holds them up. The model stays `busy` as the spec says."""

from __future__ import annotations

from typing import Any

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, auth, check, error_code, make_model

EVAL = [
    {"trait": "formality", "text": "We should be grateful for your reply.", "quality": 1},
    {"trait": "formality", "text": "lol whatever dude", "quality": 0},
]


def _person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role))


def _label(svc: Svc, h: str, key: dict[str, str], text: str, quality: float) -> dict[str, Any]:
    [pid] = check(svc.client.post(f"/v1/models/{h}/pool", json={"texts": [text]}, headers=svc.author), 201)[
        "ids"
    ]
    body = {"trait": "formality", "quality": quality}
    out: dict[str, Any] = check(
        svc.client.post(f"/v1/models/{h}/pool/{pid}/label", json=body, headers=key), 201
    )
    return out


def test_labels_reviews_and_corrections_go_through_while_an_evaluation_runs(idle_svc: Svc) -> None:
    svc = idle_svc
    c, owner, h = svc.client, svc.author, "acme.evalbusy"
    make_model(c, owner, h)
    svc.ctx.executor.execute(
        check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=owner), 202)["run_id"]
    )
    check(c.patch(f"/v1/models/{h}", json={"auto_retrain": False}, headers=owner), 200)
    ann, rita = _person(svc, "ann", "annotator"), _person(svc, "rita", "reviewer")
    first = _label(svc, h, ann, "Yours faithfully, the clerk.", 1.0)
    assert first["stored_as"] == "feedback"
    check(c.post(f"/v1/models/{h}/evaluation-set", json={"items": EVAL}, headers=owner), 201)
    run = check(c.post(f"/v1/models/{h}/versions/v1/evaluate", headers=owner), 202)["run_id"]
    model = check(c.get(f"/v1/models/{h}", headers=owner), 200)
    assert (model["state"], model["last_operation"]["kind"]) == ("busy", "evaluate")

    # A label, its review, a correction, a settle, one's own change and a withdrawal: none waits.
    second = _label(svc, h, ann, "hey there lol", 0.0)
    review = {"decision": "accept", "items": [{"kind": "feedback", "id": first["id"]}]}
    assert check(c.post(f"/v1/models/{h}/review", json=review, headers=rita), 200)["reviewed"] == 1
    fix = {"quality": 0.9, "comment": "nearly formal"}
    check(c.post(f"/v1/models/{h}/labels/{first['id']}/correct", json=fix, headers=rita), 200)
    settle = {"trait": "formality", "text": "Dear Madam, kind regards.", "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=settle, headers=rita), 200)
    check(
        c.patch(f"/v1/models/{h}/my-labels/feedback/{second['id']}", json={"quality": 0.1}, headers=ann), 200
    )
    check(c.delete(f"/v1/models/{h}/feedback/{second['id']}", headers=owner), 200)
    removed = check(c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=owner), 200)
    check(c.post(f"/v1/models/{h}/labels/restore", json={"undo": removed["undo"]}, headers=owner), 200)
    model = check(c.get(f"/v1/models/{h}", headers=owner), 200)
    assert (model["state"], model["last_operation"]["run_id"]) == ("busy", run)  # the contract's busy

    # A training reads the labels: while one is in flight a review of the buffer still waits for it.
    svc.ctx.executor.execute(run)
    check(c.post(f"/v1/models/{h}/train", json={"reoptimize_params": True}, headers=owner), 202)
    third = _label(svc, h, ann, "Respectfully yours, the board.", 1.0)
    review = {"decision": "accept", "items": [{"kind": "feedback", "id": third["id"]}]}
    assert error_code(c.post(f"/v1/models/{h}/review", json=review, headers=rita), 409) == "model_busy"
