"""A reviewer corrects a label (docs/api/review.md, "Correcting a label"): the corrected quality is what
training and the votes export read, the label keeps its id, and what its annotator gave, who corrected it
and when stay visible in the review queue and the text's history; each correction is audited."""

from __future__ import annotations

from typing import Any

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, check, error_code, make_model, train_ready
from tests.support.service import auth as bearer

WRONG = "lol whatever dude, see ya"  # casual, voted formal by the annotator


def person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return bearer(create_key(s, ["acme"], "authoring", name, role))


def correct(svc: Svc, h: str, label: int, key: dict[str, str], **body: Any) -> Any:
    return svc.client.post(f"/v1/models/{h}/labels/{label}/correct", json=body, headers=key)


def votes_of(svc: Svc, h: str, text: str) -> list[dict[str, Any]]:
    page = check(svc.client.get(f"/v1/models/{h}/votes", params={"limit": 1000}, headers=svc.author), 200)
    return [v for v in page["items"] if v["text"] == text]


def events(svc: Svc, kind: str) -> list[dict[str, Any]]:
    items = check(svc.client.get("/v1/namespaces/acme/audit", headers=svc.author), 200)["items"]
    return [e for e in items if e["kind"] == kind]


def test_a_corrected_vote_trains_as_corrected_and_keeps_what_its_annotator_said(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.fix"
    make_model(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    vote = {"trait": "formality", "text": WRONG, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [vote]}, headers=ann), 201)
    [given] = votes_of(svc, h, WRONG)
    label = given["id"]
    before = {t["key"]: t for t in check(c.get(f"/v1/models/{h}/traits", headers=owner), 200)["traits"]}

    out = check(correct(svc, h, label, rita, quality=0.0, comment="casual: see the guidelines"), 200)
    assert {k: out[k] for k in ("kind", "id", "quality", "original_quality", "corrected_by")} == {
        "kind": "sample",
        "id": label,
        "quality": 0.0,
        "original_quality": 1.0,
        "corrected_by": "rita",
    }
    assert (out["status"], out["reviewed_by"], out["comment"]) == (
        "accepted",
        "rita",
        "casual: see the guidelines",
    )
    # The same correction again (a client's retry) stores nothing more.
    assert check(correct(svc, h, label, rita, quality=0.0), 200) == out

    # The export and the trait's counts read the corrected quality; the review queue shows both.
    assert [(v["id"], v["quality"], v["annotator"]) for v in votes_of(svc, h, WRONG)] == [(label, 0.0, "ann")]
    after = {t["key"]: t for t in check(c.get(f"/v1/models/{h}/traits", headers=owner), 200)["traits"]}
    assert after["formality"]["positive_samples"] == before["formality"]["positive_samples"] - 1
    accepted = check(c.get(f"/v1/models/{h}/review", params={"status": "accepted"}, headers=ann), 200)
    assert [(i["id"], i["quality"], i["original_quality"], i["corrected_by"]) for i in accepted["items"]] == [
        (label, 0.0, 1.0, "rita")
    ]

    history = check(c.get(f"/v1/models/{h}/labels/{label}/history", headers=ann), 200)
    assert [(i["id"], i["quality"]) for i in history["items"]] == [(label, 0.0)]
    assert [
        {k: x[k] for k in ("id", "annotator", "before", "after", "corrected_by", "comment")}
        for x in history["corrections"]
    ] == [
        {
            "id": label,
            "annotator": "ann",
            "before": 1.0,
            "after": 0.0,
            "corrected_by": "rita",
            "comment": "casual: see the guidelines",
        }
    ]
    assert [(e["actor"], e["detail"]) for e in events(svc, "label_corrected")] == [
        (
            "rita",
            {
                "sample_id": label,
                "trait": "formality",
                "annotator": "ann",
                "before": 1.0,
                "after": 0.0,
                "commented": True,
            },
        )
    ]

    # The training takes the label in as corrected: accepted now, and named by the version.
    train_ready(c, owner, h)
    assert [(v["quality"], v["version_no"]) for v in votes_of(svc, h, WRONG)] == [(0.0, 1)]
    # Corrected again after training: the next training takes the new answer; the history keeps both.
    check(correct(svc, h, label, person(svc, "olga", "owner"), quality=0.25), 200)
    assert [(v["quality"], v["version_no"]) for v in votes_of(svc, h, WRONG)] == [(0.25, None)]
    history = check(c.get(f"/v1/models/{h}/labels/{label}/history", headers=owner), 200)
    assert [(x["before"], x["after"], x["corrected_by"]) for x in history["corrections"]] == [
        (1.0, 0.0, "rita"),
        (0.0, 0.25, "olga"),
    ]
    last = check(c.get(f"/v1/models/{h}/review", params={"status": "accepted"}, headers=ann), 200)
    assert [(i["original_quality"], i["quality"]) for i in last["items"]] == [(1.0, 0.25)]


def test_a_corrected_buffered_label_keeps_its_correction_once_folded_in(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.fixfb"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    body = {
        "content": "Kindly find the report attached.",
        "feedback": [{"trait": "formality", "quality": 0.0}],
    }
    check(c.post(f"/v1/models/{h}/score", json=body, headers=ann), 200)
    pending = check(c.get(f"/v1/models/{h}/review", headers=rita), 200)["items"]
    assert [(i["kind"], i["status"]) for i in pending] == [("feedback", "pending")]
    label = pending[0]["id"]
    out = check(correct(svc, h, label, rita, quality=1.0), 200)
    assert (out["kind"], out["status"], out["original_quality"]) == ("feedback", "accepted", 0.0)

    # Folds the buffered label into the samples, keeping its id (a retraining: the model is trained).
    train_ready(c, owner, h, reoptimize_params=True)
    history = check(c.get(f"/v1/models/{h}/labels/{label}/history", headers=ann), 200)
    assert [(i["kind"], i["id"], i["quality"]) for i in history["items"]] == [("sample", label, 1.0)]
    assert [(x["id"], x["before"], x["after"]) for x in history["corrections"]] == [(label, 0.0, 1.0)]


def test_only_a_reviewer_corrects_and_a_refused_correction_changes_nothing(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.fixno"
    make_model(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    vote = {"trait": "formality", "text": WRONG, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [vote]}, headers=ann), 201)
    label = votes_of(svc, h, WRONG)[0]["id"]

    assert error_code(correct(svc, h, label, ann, quality=0.0), 403) == "forbidden"  # her own label too
    assert error_code(correct(svc, h, label, svc.scorer, quality=0.0), 403) == "forbidden"
    assert error_code(correct(svc, h, label, svc.other, quality=0.0), 404) == "model_not_found"
    for bad in ({"quality": 1.5}, {}, {"quality": 0.0, "comment": "x" * 1001}):
        assert error_code(correct(svc, h, label, rita, **bad), 422) == "validation_error"
    assert error_code(correct(svc, h, label, rita, quality=0.0, extra=1), 422) == "unknown_field"
    assert error_code(correct(svc, h, label, rita, point=2), 422) == "not_a_scale"
    for missing in (999_999, 2**40, 0):
        assert error_code(correct(svc, h, missing, rita, quality=0.0), 404) == "label_not_found"
    # Another model's label is not this model's.
    make_model(c, owner, "acme.fixother", with_data=False)
    assert error_code(correct(svc, "acme.fixother", label, rita, quality=0.0), 404) == "label_not_found"

    assert [(v["quality"], v["annotator"]) for v in votes_of(svc, h, WRONG)] == [(1.0, "ann")]
    assert check(c.get(f"/v1/models/{h}/labels/{label}/history", headers=owner), 200)["corrections"] == []
    assert events(svc, "label_corrected") == []

    check(c.delete(f"/v1/models/{h}", headers=owner), 200)
    assert error_code(correct(svc, h, label, rita, quality=0.0), 409) == "model_archived"
