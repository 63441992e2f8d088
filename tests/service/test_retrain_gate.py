"""No automatic retraining behind a team's back: off by default where more than one person writes, and a
retraining the labels started never replaces the serving version with a worse one (docs/api.md,
"Automatic retraining"). retrain_buffer is 3 in the test settings (tests/service/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import (
    CASUAL,
    FORMAL,
    Svc,
    auth,
    check,
    make_model,
    running,
    train_ready,
    wait_settled,
)


def annotator(svc: Svc, name: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, "annotator"))


def feedback(svc: Svc, handle: str, key: dict[str, str], text: str, quality: float) -> None:
    body = {"content": text, "feedback": [{"trait": "formality", "quality": quality}]}
    check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=key), 200)


def test_an_annotators_feedback_makes_no_version_on_a_team_model(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.tone"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann = annotator(svc, "ann")
    assert check(c.get(f"/v1/models/{h}", headers=owner), 200)["auto_retrain"] is False  # a team's default
    probe = {"content": FORMAL[0]}
    before = check(c.post(f"/v1/models/{h}/score", json=probe, headers=owner), 200)
    for i in range(60):  # 20 buffers' worth
        feedback(svc, h, ann, f"{FORMAL[i % len(FORMAL)]} #{i}", 0.0)
    model = wait_settled(c, h, owner)
    assert model["version_no"] == 1 and model["buffered_feedback"] == 60
    versions = check(c.get(f"/v1/models/{h}/versions", headers=owner), 200)["items"]
    assert [v["version_no"] for v in versions] == [1]
    after = check(c.post(f"/v1/models/{h}/score", json=probe, headers=owner), 200)
    assert after["scores"] == before["scores"]

    # The owner's choice turns it on: a full buffer of accepted labels retrains; the annotator's 60 wait
    # for a reviewer (review is on for a team's model).
    patched = check(c.patch(f"/v1/models/{h}", json={"auto_retrain": True}, headers=owner), 200)
    assert patched["auto_retrain"] is True
    for i in range(3):
        feedback(svc, h, owner, f"We remain at your disposal, {i}.", 1.0)
    model = wait_settled(c, h, owner)
    assert model["version_no"] == 2 and model["buffered_feedback"] == 60


def test_one_persons_model_still_retrains_by_itself(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "lab.solo")  # lab: only this key may write it
    train_ready(c, h, "lab.solo")
    assert check(c.get("/v1/models/lab.solo", headers=h), 200)["auto_retrain"] is True
    for i in range(3):
        feedback(svc, "lab.solo", h, f"We respectfully decline, item {i}.", 1.0)
    assert wait_settled(c, "lab.solo", h)["version_no"] == 2


def _mix(texts: list[str], n: int, offset: int) -> list[str]:
    """n texts made of two sentences of `texts` each (distinct, in the texts' vocabulary)."""
    return [f"{texts[i % len(texts)]} {texts[(i + offset) % len(texts)]} ({i})" for i in range(n)]


def test_a_labels_retraining_worse_on_the_evaluation_set_makes_no_version(
    tmp_path: Path, database_url: str
) -> None:
    # A buffer of 40 (the tests' 3 would retrain on the first few labels): the flood, one retraining.
    with running(tmp_path, database_url=database_url, retrain_buffer=40) as svc:
        c, h, handle = svc.client, svc.author, "lab.gated"
        make_model(c, h, handle)
        items = [{"trait": "formality", "text": t, "quality": 1.0} for t in _mix(FORMAL, 12, 1)]
        items += [{"trait": "formality", "text": t, "quality": 0.0} for t in _mix(CASUAL, 12, 1)]
        check(c.post(f"/v1/models/{handle}/evaluation-set", json={"items": items}, headers=h), 201)
        train_ready(c, h, handle)
        # 40 labels with the poles swapped, on texts like the evaluation set's.
        for text in _mix(FORMAL, 20, 2):
            feedback(svc, handle, h, text, 0.0)
        for text in _mix(CASUAL, 20, 2):
            feedback(svc, handle, h, text, 1.0)
        model = wait_settled(c, handle, h)
        run = model["last_operation"]
        assert run["status"] == "failed" and run["error"]["code"] == "worse_than_current", run
        message = run["error"]["message"]
        assert "v1 keeps serving" in message and "formality: roc_auc" in message and "95% interval" in message
        assert model["version_no"] == 1 and model["state"] == "ready" and model["buffered_feedback"] == 40
        versions = check(c.get(f"/v1/models/{handle}/versions", headers=h), 200)["items"]
        assert [v["version_no"] for v in versions] == [1]
