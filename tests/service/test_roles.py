"""Roles at work (docs/api.md "Roles"): what an annotator and a reviewer may do beside an owner, a text
settled once, the audit log and who reads it, and rows of a file import that are their raters' votes only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from service.__main__ import main
from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import AuditEvent, FeedbackLabel, SampleRow
from tests.support.service import (
    CASUAL,
    FORMAL,
    Svc,
    auth,
    check,
    error_code,
    make_model,
    running,
    train_ready,
)

TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
TEXT = "Dear Sir, with kind regards."


def person(svc: Svc, name: str, role: str, namespaces: tuple[str, ...] = ("acme",)) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, list(namespaces), "authoring", name, role))


def draft(svc: Svc, handle: str) -> None:
    check(svc.client.post("/v1/models", json={"handle": handle}, headers=svc.author), 201)
    check(svc.client.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)


def post(svc: Svc, handle: str, key: dict[str, str], *rows: dict[str, Any]) -> Any:
    return svc.client.post(f"/v1/models/{handle}/samples", json={"samples": list(rows)}, headers=key)


def vote(quality: float, text: str = TEXT, **more: Any) -> dict[str, Any]:
    return {"trait": "formality", "text": text, "quality": quality, **more}


def rows(svc: Svc, model: Any = SampleRow) -> int:
    with transaction(svc.ctx.reads) as s:
        return s.scalar(select(func.count()).select_from(model)) or 0


def audit(svc: Svc, key: dict[str, str], namespace: str = "acme", **query: Any) -> Any:
    return svc.client.get(f"/v1/namespaces/{namespace}/audit", params=query, headers=key)


def test_a_text_is_settled_once_and_the_second_settler_learns_by_whom(svc: Svc) -> None:
    h = "acme.settle"
    draft(svc, h)
    ann, rev1, rev2 = (
        person(svc, n, r) for n, r in (("ann", "annotator"), ("rita", "reviewer"), ("rob", "reviewer"))
    )
    check(post(svc, h, ann, vote(1.0)), 201)
    check(post(svc, h, rev2, vote(0.0)), 201)
    before = rows(svc), rows(svc, AuditEvent)
    # An annotator votes, but does not settle: 403 in the envelope, nothing stored.
    resp = post(svc, h, ann, vote(0.0, adjudicated=True))
    assert error_code(resp, 403) == "forbidden" and "reviewer role" in resp.json()["error"]["message"]
    before = (before[0], before[1] + 1)  # the refusal is an event (access_refused), and nothing else
    assert (rows(svc), rows(svc, AuditEvent)) == before
    first = check(post(svc, h, rev1, vote(0.0, adjudicated=True)), 201)["ids"]
    assert check(post(svc, h, rev1, vote(0.0, adjudicated=True)), 201)["ids"] == first  # a repeat: harmless
    after = rows(svc), rows(svc, AuditEvent)
    assert after == (before[0] + 1, before[1] + 1)
    # Another reviewer, another quality, or the owner: 409, naming who settled it and when.
    for key, quality in ((rev2, 1.0), (rev2, 0.0), (svc.author, 1.0)):
        resp = post(svc, h, key, vote(0.0, text=f"  {TEXT} "), vote(quality, adjudicated=True))
        assert error_code(resp, 409) == "already_settled"
        err = resp.json()["error"]
        assert "settled already, by rita at 20" in err["message"] and f"sample {first[0]}" in err["message"]
        assert err["retryable"] is False and err["details"][0]["loc"] == ["body", "samples", 1, "adjudicated"]
    assert (rows(svc), rows(svc, AuditEvent)) == after  # nothing of those requests was stored
    # Two settles of one text in one request, differently: refused whole.
    other = "Yo, what's up?"
    resp = post(svc, h, rev2, vote(1.0, other, adjudicated=True), vote(0.0, other, adjudicated=True))
    assert error_code(resp, 409) == "already_settled"
    assert (rows(svc), rows(svc, AuditEvent)) == after
    # Its settler takes the settle back; then another may settle.
    resp = svc.client.delete(f"/v1/models/{h}/samples/{first[0]}", headers=rev2)
    assert error_code(resp, 403) == "forbidden"  # a colleague's settle is the owner's to delete
    check(svc.client.delete(f"/v1/models/{h}/samples/{first[0]}", headers=rev1), 200)
    check(post(svc, h, rev2, vote(1.0, adjudicated=True)), 201)
    kinds = [e["kind"] for e in check(audit(svc, svc.author), 200)["items"]]
    # newest first: the settles, the refusals of ann's settle and of rob's delete, the model's making
    settling = ["settled", "unsettled", "access_refused", "settled", "access_refused"]
    assert kinds == [*settling, "traits_changed", "model_created"]


def test_what_an_annotator_may_post_and_take_back(svc: Svc) -> None:
    h = "acme.annot"
    draft(svc, h)
    ann, bob = person(svc, "ann", "annotator"), person(svc, "bob", "annotator")
    before = rows(svc)
    # Another rater's row, or a file's: an import, the owner's (403, nothing stored).
    for row in (vote(1.0, annotator="rater-3"), vote(1.0, provenance="imported")):
        resp = post(svc, h, ann, vote(0.0, "Own vote."), row)
        assert error_code(resp, 403) == "forbidden" and "owner role" in resp.json()["error"]["message"]
    assert rows(svc) == before
    mine = check(post(svc, h, ann, vote(1.0), vote(0.0, "lol", annotator="ann")), 201)["ids"]
    theirs = check(post(svc, h, bob, vote(0.0)), 201)["ids"][0]
    # The Label page's undo: one's own label goes; a colleague's stays.
    resp = svc.client.delete(f"/v1/models/{h}/samples/{theirs}", headers=ann)
    assert error_code(resp, 403) == "forbidden"
    resp = svc.client.patch(f"/v1/models/{h}/samples/{theirs}", json={"quality": 1.0}, headers=ann)
    assert error_code(resp, 403) == "forbidden"
    check(svc.client.patch(f"/v1/models/{h}/samples/{mine[1]}", json={"quality": 0.2}, headers=ann), 200)
    check(svc.client.delete(f"/v1/models/{h}/samples/{mine[0]}", headers=ann), 200)
    assert rows(svc) == before + 2
    # Nothing else that writes: train, traits, the pool, a new model.
    for method, url, body in (
        ("POST", f"/v1/models/{h}/train", {"effort": "low"}),
        (
            "POST",
            f"/v1/models/{h}/traits",
            {"traits": [{"name": "T", "positive_label": "a", "negative_label": "b"}]},
        ),
        ("POST", f"/v1/models/{h}/pool", {"texts": ["A text."]}),
        ("POST", "/v1/models", {"handle": "acme.mine"}),
    ):
        assert error_code(svc.client.request(method, url, json=body, headers=ann), 403) == "forbidden"
    check(svc.client.post(f"/v1/models/{h}/pool", json={"texts": ["A text."]}, headers=svc.author), 201)
    suggested = svc.client.post(f"/v1/models/{h}/pool/suggest", json={"trait": "formality"}, headers=ann)
    assert check(suggested, 200)["items"]  # suggestions are the annotator's to ask for


def test_buffered_labels_an_annotator_withdraws_its_own_a_reviewer_anyones(svc: Svc) -> None:
    h = "acme.buffer"
    make_model(svc.client, svc.author, h)
    train_ready(svc.client, svc.author, h)
    ann, bob, rev = (
        person(svc, "ann", "annotator"),
        person(svc, "bob", "annotator"),
        person(svc, "rev", "reviewer"),
    )
    ids = {}
    for name, key in (("ann", ann), ("bob", bob)):
        body = {"content": f"A text {name} labels.", "feedback": [{"trait": "formality", "quality": 1.0}]}
        check(svc.client.post(f"/v1/models/{h}/score", json=body, headers=key), 200)
        page = check(svc.client.get(f"/v1/models/{h}/feedback", headers=key), 200)
        ids[name] = next(i["id"] for i in page["items"] if i["annotator"] == name)
    url = f"/v1/models/{h}/feedback/{{}}"
    before = rows(svc, FeedbackLabel), rows(svc, AuditEvent)
    resp = svc.client.delete(url.format(ids["bob"]), headers=ann)
    assert error_code(resp, 403) == "forbidden" and "reviewer role" in resp.json()["error"]["message"]
    before = (before[0], before[1] + 1)  # bob's label kept; the refusal recorded (access_refused)
    assert (rows(svc, FeedbackLabel), rows(svc, AuditEvent)) == before
    check(svc.client.delete(url.format(ids["ann"]), headers=ann), 200)
    check(svc.client.delete(url.format(ids["bob"]), headers=rev), 200)
    assert rows(svc, FeedbackLabel) == before[0] - 2
    events = [e for e in check(audit(svc, svc.author), 200)["items"] if e["kind"] == "feedback_withdrawn"]
    assert [(e["kind"], e["actor"], e["handle"], e["detail"]["annotator"]) for e in events] == [
        ("feedback_withdrawn", "rev", h, "bob"),
        ("feedback_withdrawn", "ann", h, "ann"),
    ]
    detail = events[0]["detail"]
    assert detail == {"trait": "formality", "feedback_id": ids["bob"], "quality": 1.0, "annotator": "bob"}


def test_the_audit_log_is_its_owners_to_read_in_pages(svc: Svc) -> None:
    h = "acme.log"
    draft(svc, h)
    rev = person(svc, "rev", "reviewer")
    for i in range(3):
        check(post(svc, h, rev, vote(1.0, f"Text {i}."), vote(0.0, f"Text {i}.", adjudicated=True)), 201)
    newest = page = check(audit(svc, svc.author, limit=2), 200)
    assert page["namespace"] == "acme" and page["limit"] == 2 and page["next_cursor"]
    events = page["items"]
    while page["next_cursor"]:
        page = check(audit(svc, svc.author, limit=2, cursor=page["next_cursor"]), 200)
        events += page["items"]
    assert [e["id"] for e in events] == sorted((e["id"] for e in events), reverse=True)  # newest first
    settles = [e for e in events if e["kind"] == "settled"]  # after the model's creation and its traits
    assert len(settles) == 3 and [e["kind"] for e in events[3:]] == ["traits_changed", "model_created"]
    assert all(e["actor"] == "rev" and "text" not in e["detail"] for e in settles)
    assert events[0]["detail"]["sample_id"] and events[0]["detail"]["quality"] == 0.0
    assert error_code(audit(svc, svc.author, cursor=newest["next_cursor"] + "x"), 400) == "invalid_cursor"
    assert error_code(audit(svc, svc.author, namespace="lab", cursor=newest["next_cursor"]), 400)
    for key in (rev, person(svc, "ann", "annotator"), svc.other, svc.scorer):
        assert error_code(audit(svc, key), 403) == "forbidden"
    assert check(audit(svc, svc.author, namespace="lab"), 200)["items"] == []  # another namespace's log


def test_role_changes_are_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'scoring.sqlite'}"
    base = ["--database-url", url]
    create = ["keys", "create", "--scope", "authoring", *base]
    assert (
        main([*create, "--namespace", "acme", "--namespace", "lab", "--name", "ann", "--role", "annotator"])
        == 0
    )
    assert "named ann (annotator)" in capsys.readouterr().out
    assert main([*create, "--namespace", "acme", "--name", "boss"]) == 0
    boss = auth(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["keys", "role", "ann", "--role", "reviewer", *base]) == 0
    assert "ann is now reviewer (was annotator)" in capsys.readouterr().out
    assert main(["keys", "role", "ann", "--role", "reviewer", *base]) == 0  # no change: nothing recorded
    assert "nothing changed" in capsys.readouterr().out
    assert main(["keys", "role", "nobody", "--role", "owner", *base]) == 2
    assert "no key named 'nobody'" in capsys.readouterr().err
    with running(tmp_path, database_url=url) as svc:
        events = [e for e in check(audit(svc, boss), 200)["items"] if e["kind"] == "role_changed"]
        got = [(e["kind"], e["actor"], e["handle"], *(e["detail"][k] for k in ("name", "from", "to")))
               for e in events]  # fmt: skip
        assert got == [
            ("role_changed", "operator", None, "ann", "annotator", "reviewer"),
            ("role_changed", "operator", None, "boss", None, "owner"),
            ("role_changed", "operator", None, "ann", None, "annotator"),
        ]


def test_imported_rows_are_not_the_importers_votes(svc: Svc) -> None:
    h = "acme.imported"
    draft(svc, h)
    c = svc.client
    ann = person(svc, "ann", "annotator")
    texts = FORMAL[:4] + CASUAL[:4]
    # A plain file import by the owner: nobody's votes; a several-raters file: its raters'.
    plain = [vote(float(i < 4), t, provenance="imported") for i, t in enumerate(texts)]
    raters = [
        vote(float(i < 4), t, provenance="imported", annotator=r)
        for i, t in enumerate(texts[:4])
        for r in ("r1", "r2")
    ]
    check(post(svc, h, svc.author, *plain, *raters), 201)
    check(post(svc, h, svc.author, *plain), 201)  # the same file again: stored once
    page = check(c.get(f"/v1/models/{h}/samples", params={"provenance": "imported"}, headers=svc.author), 200)
    assert len(page["items"]) == 16
    assert {r["annotator"] for r in page["items"]} == {None, "r1", "r2"}
    assert {r["provenance"] for r in page["items"]} == {"imported"}
    # ann votes on every text: the agreement sees ann and the file's raters, never the importer.
    check(post(svc, h, ann, *(vote(float(i < 4), t) for i, t in enumerate(texts))), 201)
    agreement = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)["traits"]["formality"]
    assert {a["annotator"]: a["votes"] for a in agreement["annotators"]} == {"ann": 8, "r1": 4, "r2": 4}
    assert agreement["texts_with_votes"] == 4  # the rated texts; the plain import's are nobody's second vote
    owner = check(c.get("/v1/keys/current", headers=svc.author), 200)["name"]
    assert owner not in {a["annotator"] for a in agreement["annotators"]}
    # "A colleague labelled this one": never for a text only the importer's file labelled.
    only = ["Imported only, one.", "Imported only, two."]
    check(post(svc, h, svc.author, *(vote(1.0, t, provenance="imported") for t in only)), 201)
    check(post(svc, h, svc.author, vote(1.0, "The owner's own label.")), 201)  # a colleague's vote, this one
    pool = [*only, "The owner's own label.", "A new text to label.", "Another new one."]
    check(c.post(f"/v1/models/{h}/pool", json={"texts": pool}, headers=svc.author), 201)
    body = {"trait": "formality", "k": 4, "overlap": 0.5}
    got = check(c.post(f"/v1/models/{h}/pool/suggest", json=body, headers=ann), 200)["items"]
    assert [i["text"] for i in got if i["overlap"]] == ["The owner's own label."]
    assert not {i["text"] for i in got} & set(only)  # labelled (by the file): not suggested either
    # `provenance` takes `authored` or `imported` only.
    resp = post(svc, h, svc.author, vote(1.0, provenance="feedback"))
    assert error_code(resp, 422) == "validation_error"
