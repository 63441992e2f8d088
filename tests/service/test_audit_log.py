"""The audit log is complete and append-only: an owner's edit of a colleague's vote leaves the vote theirs
and records who changed what (before, after); deleting votes, models and pool texts is recorded; keys made
and revoked are recorded; nothing, not even a hand-written statement, updates or deletes an event. Keys
end: `keys revoke NAME` and an expiry give 401 in the envelope."""

from __future__ import annotations

import itertools
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from service.__main__ import main
from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import utcnow
from tests.support.service import FORMAL, Svc, auth, check, error_code, running, wait_settled

TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
_ROUNDS = itertools.count(1000)  # a model per example: the fixture's service is shared by them


def person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role))


def events(svc: Svc, kind: str | None = None) -> list[dict[str, Any]]:
    items = check(svc.client.get("/v1/namespaces/acme/audit", headers=svc.author), 200)["items"]
    return [e for e in items if kind is None or e["kind"] == kind]


def draft(svc: Svc, handle: str) -> None:
    check(svc.client.post("/v1/models", json={"handle": handle}, headers=svc.author), 201)
    check(svc.client.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)


def test_an_owners_edit_of_a_colleagues_vote_stays_theirs_and_is_recorded(svc: Svc) -> None:
    c, h = svc.client, "acme.edits"
    draft(svc, h)
    bob = person(svc, "bob", "annotator")
    owner_name = check(c.get("/v1/keys/current", headers=svc.author), 200)["name"]
    one = {"trait": "formality", "text": FORMAL[0], "quality": 0.9}
    sid = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=bob), 201)["ids"][0]
    edited = check(c.patch(f"/v1/models/{h}/samples/{sid}", json={"quality": 0.2}, headers=svc.author), 200)
    assert edited["annotator"] == "bob" and edited["quality"] == 0.2  # bob's vote, corrected, still bob's
    [event] = events(svc, "vote_edited")
    assert event["actor"] == owner_name and event["handle"] == h
    assert event["detail"] == {
        "sample_id": sid,
        "annotator": "bob",
        "before": {"trait": "formality", "quality": 0.9},
        "after": {"trait": "formality", "quality": 0.2},
        "text_changed": False,
    }
    # bob's own edit is recorded too, as his.
    check(c.patch(f"/v1/models/{h}/samples/{sid}", json={"text": FORMAL[1]}, headers=bob), 200)
    latest = events(svc, "vote_edited")[0]
    assert latest["actor"] == "bob" and latest["detail"]["text_changed"] is True
    assert all("text" not in e["detail"] for e in events(svc))  # never a text


def test_deleting_votes_models_and_pool_texts_is_recorded(svc: Svc) -> None:
    c, h = svc.client, "acme.deletes"
    draft(svc, h)
    bob = person(svc, "bob", "annotator")
    one = {"trait": "formality", "text": FORMAL[0], "quality": 1.0}
    sid = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=bob), 201)["ids"][0]
    check(c.delete(f"/v1/models/{h}/samples/{sid}", headers=svc.author), 200)
    [gone] = events(svc, "vote_deleted")
    assert gone["detail"] == {"trait": "formality", "sample_id": sid, "quality": 1.0, "annotator": "bob"}
    ids = check(c.post(f"/v1/models/{h}/pool", json={"texts": FORMAL[:3]}, headers=svc.author), 201)["ids"]
    check(c.delete(f"/v1/models/{h}/pool/{ids[0]}", headers=svc.author), 200)
    check(c.delete(f"/v1/models/{h}/pool", headers=svc.author), 200)
    assert [e["detail"] for e in events(svc, "pool_deleted")] == [{"deleted": 2}, {"pool_text_id": ids[0]}]
    check(c.delete(f"/v1/models/{h}", headers=svc.author), 200)
    [model] = events(svc, "model_deleted")
    assert model["handle"] == h and model["detail"] == {"state": "draft"}


def test_nobody_edits_the_log_not_even_in_the_database(svc: Svc) -> None:
    draft(svc, "acme.frozen")
    check(svc.client.delete("/v1/models/acme.frozen", headers=svc.author), 200)
    before = events(svc)
    for statement in ("UPDATE audit_events SET actor = 'nobody'", "DELETE FROM audit_events"):
        with pytest.raises(DBAPIError, match="append-only"), svc.ctx.engine.begin() as conn:
            conn.execute(text(statement))
    assert events(svc) == before


def test_keys_revoked_or_expired_get_401_and_are_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'scoring.sqlite'}"
    base = ["--database-url", url]
    create = ["keys", "create", "--scope", "authoring", "--namespace", "acme", *base]
    assert main([*create, "--name", "boss"]) == 0
    boss = auth(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*create, "--name", "ann", "--role", "annotator", "--expires-in-days", "30"]) == 0
    out = capsys.readouterr().out
    assert "valid until" in out
    ann = auth(out.strip().splitlines()[-1])
    assert main([*create, "--name", "x", "--expires-in-days", "0"]) == 2
    assert "positive number of days" in capsys.readouterr().err
    with running(tmp_path, database_url=url) as svc:
        assert check(svc.client.get("/v1/keys/current", headers=ann), 200)["name"] == "ann"
        with transaction(svc.ctx.sessions) as s:
            ended = utcnow() - timedelta(seconds=1)
            old = auth(create_key(s, ["acme"], "authoring", "old", expires_at=ended))
        assert error_code(svc.client.get("/v1/keys/current", headers=old), 401) == "unauthorized"
    assert main(["keys", "revoke", "ann", *base]) == 0
    assert "ann is revoked" in capsys.readouterr().out
    assert main(["keys", "revoke", "ann", *base]) == 2  # revoked already: nothing to do
    assert "no live key named 'ann'" in capsys.readouterr().err
    with running(tmp_path, database_url=url) as svc:
        assert error_code(svc.client.get("/v1/keys/current", headers=ann), 401) == "unauthorized"
        body = {"samples": [{"trait": "x", "text": "y", "quality": 1.0}]}
        assert error_code(svc.client.post("/v1/models/acme.m/samples", json=body, headers=ann), 401)
        items = check(svc.client.get("/v1/namespaces/acme/audit", headers=boss), 200)["items"]
        keys = [(e["kind"], e["detail"]["name"]) for e in items if e["kind"].startswith("key_")]
        assert keys == [("key_revoked", "ann"), ("key_created", "ann"), ("key_created", "boss")]
        expiring = next(e for e in items if e["kind"] == "key_created" and e["detail"]["name"] == "ann")
        assert expiring["detail"]["expires_at"] is not None and expiring["actor"] == "operator"


EDITS = st.lists(
    st.tuples(st.sampled_from(["owner", "bob"]), st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.booleans()),
    min_size=1,
    max_size=6,
)


@given(EDITS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_edits_leave_the_vote_its_annotators_and_each_is_in_the_log(
    svc: Svc, edits: list[tuple[str, float, bool]]
) -> None:
    """Whoever edits bob's vote, and however (quality, text), it stays bob's; every edit that changes it
    adds one `vote_edited` event whose `before` is the last one's `after`; a repeat adds none."""
    c = svc.client
    h = f"acme.prop-{next(_ROUNDS)}"
    draft(svc, h)
    bob = person(svc, f"bob{h[-4:].replace('-', '')}", "annotator")
    keys = {"owner": svc.author, "bob": bob}
    one = {"trait": "formality", "text": FORMAL[0], "quality": 1.0}
    sid = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=bob), 201)["ids"][0]
    current, changes = (1.0, FORMAL[0]), 0
    for who, quality, new_text in edits:
        text_ = FORMAL[1] if new_text and current[1] == FORMAL[0] else current[1]
        got = check(
            c.patch(
                f"/v1/models/{h}/samples/{sid}", json={"quality": quality, "text": text_}, headers=keys[who]
            ),
            200,
        )
        assert got["annotator"] == check(c.get("/v1/keys/current", headers=bob), 200)["name"]
        changes += (quality, text_) != current
        current = (quality, text_)
    logged = [e for e in events(svc, "vote_edited") if e["handle"] == h][::-1]  # oldest first
    assert len(logged) == changes
    for earlier, later in zip(logged, logged[1:], strict=False):
        assert later["detail"]["before"] == earlier["detail"]["after"]


def test_a_purge_and_a_retraining_labels_start_are_in_the_audit_log(svc: Svc) -> None:
    """The irreversible delete leaves its event (which outlives the model), and a retraining a full feedback
    buffer starts names the labels that started it and whose they were."""
    c, h = svc.client, "acme.retrained"
    draft(svc, h)
    body = {"samples": [{"trait": "formality", "text": t, "quality": q} for t, q in
                        (("Dear Sir, yours faithfully.", 1.0), ("lol whatever", 0.0))]}  # fmt: skip
    check(c.post(f"/v1/models/{h}/samples", json=body, headers=svc.author), 201)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    bob = person(svc, "bob", "annotator")
    # A team's model retrains only by the owner's choice, on accepted labels: both chosen here, and audited.
    patch = {"auto_retrain": True, "review": False}
    check(c.patch(f"/v1/models/{h}", json=patch, headers=svc.author), 200)
    [changed] = [e for e in events(svc, "model_changed") if e["handle"] == h]
    assert changed["detail"]["settings"]["review"]["to"] is False
    buffer = svc.ctx.settings.retrain_buffer
    for i in range(buffer):
        score = {"content": f"Text {i} to label.", "feedback": [{"trait": "formality", "quality": 0.0}]}
        check(c.post(f"/v1/models/{h}/score", json=score, headers=bob), 200)
    wait_settled(c, h, svc.author)
    [started] = [e for e in events(svc, "run_started") if e["detail"]["run_kind"] == "retrain"]
    assert started["actor"] == "service" and started["handle"] == h
    assert started["detail"]["options"]["triggered_by"] == "retrain_buffered"
    assert started["detail"]["options"]["labels"] == buffer and started["detail"]["options"]["by"] == {
        "bob": buffer
    }
    check(c.delete(f"/v1/models/{h}", params={"purge": "true"}, headers=svc.author), 200)
    check(c.get(f"/v1/models/{h}", headers=svc.author), 404)
    [purged] = events(svc, "model_purged")
    assert (
        purged["handle"] == h
        and purged["actor"] == check(c.get("/v1/keys/current", headers=svc.author), 200)["name"]
    )
