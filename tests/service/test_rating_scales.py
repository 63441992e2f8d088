"""Rating scales: a trait labelled on points 1..N keeps each label's point, refuses the other kind of label
with the envelope and stores nothing then, measures ordinal agreement, and an import of raters' 1-5 ratings
keeps them as points."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.engine.agreement import ordinal_alpha
from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, auth, check, error_code

H = "acme.scales"
M = f"/v1/models/{H}"
NAMES = ["rude", "curt", "neutral", "courteous", "polite"]
POLITE: dict[str, Any] = {
    "name": "Politeness",
    "positive_label": "polite",
    "negative_label": "rude",
    "scale": {"points": 5, "names": NAMES, "unsure": True},
}
FORMAL = {"name": "Formality", "positive_label": "formal", "negative_label": "casual"}


def _samples(c: Any, h: dict[str, str]) -> list[dict[str, Any]]:
    return check(c.get(f"{M}/samples", params={"limit": 500}, headers=h), 200)["items"]


def test_a_scaled_trait_takes_points_keeps_them_and_refuses_pole_labels(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": H}, headers=h), 201)
    # Bounds: 3-7 points, one word per point.
    for bad in (
        {"points": 2},
        {"points": 8},
        {"points": 3, "names": ["a", "b"]},
        {"points": 3, "names": ["a", " ", "c"]},
    ):
        body = {"traits": [{**FORMAL, "scale": bad}]}
        assert error_code(c.post(f"{M}/traits", json=body, headers=h), 422) == "validation_error"
    three = {
        "name": "Clarity",
        "positive_label": "clear",
        "negative_label": "muddled",
        "scale": {"points": 3},
    }
    traits = check(c.post(f"{M}/traits", json={"traits": [POLITE, FORMAL, three]}, headers=h), 201)["traits"]
    by = {t["key"]: t for t in traits}
    assert by["politeness"]["scale"] == {"points": 5, "names": NAMES, "unsure": True}
    assert by["formality"]["scale"] is None  # the default: its two poles, as before
    assert by["clarity"]["scale"] == {"points": 3, "names": ["muddled", "2", "clear"], "unsure": False}

    ids = check(c.post(f"{M}/pool", json={"texts": [f"Request number {i}, please." for i in range(4)]},
                       headers=h), 201)["ids"]  # fmt: skip
    with transaction(svc.ctx.sessions) as s:
        alice = auth(create_key(s, ["acme"], "authoring", "alice", role="annotator"))
    out = check(
        c.post(f"{M}/pool/{ids[0]}/label", json={"trait": "politeness", "point": 4}, headers=alice), 201
    )
    assert (out["point"], out["quality"], out["stored_as"]) == (4, 0.75, "sample")
    out = check(
        c.post(f"{M}/pool/{ids[1]}/label", json={"trait": "formality", "quality": 1.0}, headers=alice), 201
    )
    assert out["point"] is None

    refused: list[tuple[dict[str, object], str]] = [
        ({"trait": "politeness", "quality": 1.0}, "point_required"),  # a pole's label on a scaled trait
        ({"trait": "politeness", "point": 6}, "point_out_of_scale"),
        ({"trait": "clarity", "point": 4}, "point_out_of_scale"),
        ({"trait": "politeness", "point": 2, "quality": 0.5}, "point_quality_mismatch"),
        ({"trait": "formality", "point": 2}, "not_a_scale"),  # a point on a pole trait
        ({"trait": "politeness"}, "validation_error"),
        ({"trait": "politeness", "point": 0}, "validation_error"),
    ]
    for label, code in refused:
        resp = c.post(f"{M}/pool/{ids[2]}/label", json=label, headers=alice)
        assert error_code(resp, 422) == code, label
        assert resp.json()["error"]["request_id"]
    stored = _samples(c, h)
    assert sorted((x["trait"], x["quality"], x["point"]) for x in stored) == [
        ("formality", 1.0, None),
        ("politeness", 0.75, 4),
    ]  # nothing of the refused labels

    # A sample import of a quality on a point keeps the point; one between points keeps none. A point and
    # a quality that agree are one label.
    rows = [
        {"trait": "politeness", "text": "Would you mind?", "quality": 0.25},
        {"trait": "politeness", "text": "Mean of two raters.", "quality": 0.375},
    ]
    check(c.post(f"{M}/samples", json={"samples": rows}, headers=h), 201)
    both = {"trait": "politeness", "point": 5, "quality": 1.0}
    assert check(c.post(f"{M}/pool/{ids[3]}/label", json=both, headers=alice), 201)["point"] == 5
    points = {x["text"]: x["point"] for x in _samples(c, h) if x["trait"] == "politeness"}
    assert points["Would you mind?"] == 2 and points["Mean of two raters."] is None
    # The Team page's figures and the votes export carry the points.
    people = check(c.get(f"{M}/team", headers=h), 200)["people"]
    used = {p["trait"]: p["points"] for p in people if p["annotator"] == "alice"}
    assert used == {"politeness": {"4": 1, "5": 1}, "formality": None, "clarity": {}}
    votes = check(c.get(f"{M}/votes", headers=h), 200)["items"]
    assert sorted((v["trait"], v["point"]) for v in votes if v["annotator"] == "alice") == [
        ("formality", None),
        ("politeness", 4),
        ("politeness", 5),
    ]

    # Back to poles: the labels keep their qualities and lose their points; a 3-point scale gives them the
    # points their qualities lie on now (0.75 and 0.375 on none, 0.25 on none, 1.0 on point 3).
    check(c.patch(f"{M}/traits/politeness", json={"scale": "poles"}, headers=h), 200)
    assert {x["point"] for x in _samples(c, h)} == {None}
    assert error_code(c.post(f"{M}/pool/{ids[2]}/label", json={"trait": "politeness", "point": 3},
                             headers=alice), 422) == "not_a_scale"  # fmt: skip
    three_points = {"scale": {"points": 3}}
    traits = check(c.patch(f"{M}/traits/politeness", json=three_points, headers=h), 200)["traits"]
    assert traits[0]["scale"]["names"] == ["rude", "2", "polite"]
    repointed = {x["quality"]: x["point"] for x in _samples(c, h) if x["trait"] == "politeness"}
    assert repointed == {0.75: None, 0.25: None, 0.375: None, 1.0: 3}


def test_import_of_raters_ratings_keeps_points_and_agreement_is_ordinal(svc: Svc) -> None:
    """Three raters' 1-5 ratings of four texts, imported as the workbench maps them (rating r → (r-1)/4):
    each vote keeps its rating as its point, and the agreement's ordinal alpha is that of the ratings."""
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": H}, headers=h), 201)
    check(c.post(f"{M}/traits", json={"traits": [POLITE, FORMAL]}, headers=h), 201)
    ratings = {
        "Could you please check?": {"r1": 5, "r2": 4, "r3": 5},
        "Fix it.": {"r1": 1, "r2": 2, "r3": 1},
        "Thanks, but no.": {"r1": 3, "r2": 3, "r3": 4},
        "Send it now, would you?": {"r1": 2, "r2": 4, "r3": 3},
    }
    rows = [
        {"trait": "politeness", "text": text, "quality": round((r - 1) / 4, 6), "annotator": rater,
         "provenance": "imported"}
        for text, by in ratings.items()
        for rater, r in by.items()
    ]  # fmt: skip
    rows += [  # the same raters on a pole trait: no points there
        {"trait": "formality", "text": text, "quality": q, "annotator": rater, "provenance": "imported"}
        for text, q in (("Fix it.", 0.0), ("Could you please check?", 1.0))
        for rater in ("r1", "r2")
    ]
    check(c.post(f"{M}/samples", json={"samples": rows}, headers=h), 201)
    got = {(x["text"], x["annotator"]): x["point"] for x in _samples(c, h) if x["trait"] == "politeness"}
    assert got == {(text, rater): r for text, by in ratings.items() for rater, r in by.items()}

    agreement = check(c.get(f"{M}/agreement", headers=h), 200)["traits"]
    units = [i for i, by in enumerate(ratings.values()) for _ in by]
    points = [r for by in ratings.values() for r in by.values()]
    want = ordinal_alpha(np.array(units), np.array(points))
    assert want is not None
    assert abs(agreement["politeness"]["krippendorff_alpha_ordinal"] - want) < 1e-6
    assert agreement["formality"]["krippendorff_alpha_ordinal"] is None
    # The ratings order the texts consistently but not identically: ordinal alpha is high, below 1.
    assert 0.5 < want < 1.0
