"""Gold secrecy's threat model (docs/api/team.md, "Gold secrecy"), played by both adversaries: one annotator
who labels ordinary and gold texts, and a colleague comparing notes with them. Every route of the app has a
rule here (a new route fails `test_every_route_has_a_gold_rule` until it gets one); every read an annotator
may call is played: what it shows of the first annotator's labels, and the statuses it answers for them,
never differ between an ordinary label and a gold answer."""

from __future__ import annotations

import re
from typing import Any

from fastapi.routing import APIRoute

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, auth, check, make_model, train_ready, wait_settled

M = "/v1/models/{handle}"
# Reads played against both adversaries: what they show of a label, gold or not, is alike.
READS = {
    ("GET", p)
    for p in (
        "/v1/models", "/v1/keys/current", M, M + "/traits", M + "/samples", M + "/pool", M + "/feedback",
        M + "/review", M + "/agreement", M + "/team", M + "/votes", M + "/labels/{label_id}/history",
        M + "/unsure", M + "/comments", M + "/my-labels", M + "/history", M + "/versions",
        M + "/versions/{ref}", M + "/versions/{ref}/evaluation", M + "/versions/{ref}/pr-curve",
        M + "/versions/{ref}/thresholds", M + "/evaluation/compare", M + "/evaluation-set", M + "/guidelines",
        M + "/guidelines/versions", M + "/assignments", M + "/gold", M + "/gold/accuracy",
        "/v1/namespaces/{namespace}/people", "/v1/namespaces/{namespace}/audit",
    )
}  # fmt: skip
# Writes of a label an annotator makes, played below: each answers a gold answer as a label.
PLAYED = {
    ("POST", M + "/pool/{text_id}/label"),
    ("POST", M + "/pool/suggest"),
    ("PATCH", M + "/my-labels/{kind}/{label_id}"),
    ("DELETE", M + "/my-labels/{kind}/{label_id}"),
    ("DELETE", M + "/feedback/{label_id}"),
    ("DELETE", M + "/pool/{text_id}/label"),
}
# Routes that answer nothing of a label: scoring and the service's own, a claim's release (as for any text),
# notes and marks a person adds (their own rows, whatever the text), signing out.
NOTHING_OF_LABELS = {
    ("GET", "/v1/health"), ("POST", M + "/score"), ("POST", M + "/score/compare"),
    ("POST", M + "/traits/preview"), ("POST", "/v1alpha1/comments:analyze"),
    ("POST", "/v1alpha1/comments:suggestscore"), ("GET", "/$discovery/rest"),
    ("GET", "/discovery/v1/apis/commentanalyzer/v1alpha1/rest"), ("DELETE", M + "/pool/{text_id}/claim"),
    ("POST", M + "/unsure"), ("POST", M + "/comments"), ("POST", M + "/guidelines/read"),
    ("POST", "/v1/keys/current/sign-out"), ("POST", M + "/samples"),
}  # fmt: skip
# Everything else is a reviewer's or an owner's (tests/service/test_auth_matrix.py: an annotator gets 403),
# who is trusted with gold.
REFUSED = {
    ("POST", "/v1/models"), ("PATCH", M), ("DELETE", M), ("POST", M + "/reopen"), ("POST", M + "/traits"),
    ("PATCH", M + "/traits/{key}"), ("DELETE", M + "/traits/{key}"), ("PATCH", M + "/samples/{sample_id}"),
    ("DELETE", M + "/samples/{sample_id}"), ("POST", M + "/settle"), ("POST", M + "/train"),
    ("POST", M + "/traits/discover"), ("POST", M + "/samples/synthesize"),
    ("POST", M + "/runs/{run_id}/cancel"),
    ("POST", M + "/versions/{ref}"), ("DELETE", M + "/versions/{ref}"), ("POST", M + "/evaluation-set"),
    ("DELETE", M + "/evaluation-set"), ("POST", M + "/versions/{ref}/evaluate"), ("POST", M + "/pool"),
    ("DELETE", M + "/pool/{text_id}"), ("DELETE", M + "/pool"), ("POST", M + "/pool/label"),
    ("PUT", M + "/versions/{ref}/thresholds/{trait}"), ("DELETE", M + "/versions/{ref}/thresholds/{trait}"),
    ("DELETE", M + "/unsure/{mark_id}"), ("DELETE", M + "/comments/{comment_id}"),
    ("PUT", "/v1/namespaces/{namespace}/people/{member}"),
    ("DELETE", "/v1/namespaces/{namespace}/people/{member}"),
    ("POST", M + "/review"), ("POST", M + "/labels/{label_id}/correct"), ("DELETE", M + "/labels"),
    ("POST", M + "/labels/restore"), ("POST", M + "/assignments"), ("DELETE", M + "/assignments/{annotator}"),
    ("POST", M + "/assignments/{annotator}/reassign"), ("PUT", M + "/assignments/{annotator}/target"),
    ("POST", M + "/gold"), ("POST", M + "/gold/promote"), ("DELETE", M + "/gold/{gold_id}"),
    ("PUT", M + "/guidelines"),
}  # fmt: skip

ORDINARY = [f"An ordinary text to label, number {i}." for i in range(12)]
GOLD = ["A gold text whose answer is known, one.", "A gold text whose answer is known, two."]


def test_every_route_has_a_gold_rule(svc: Svc) -> None:
    routes = {(m, r.path_format) for r in svc.app.routes if isinstance(r, APIRoute) for m in r.methods}
    rules = [READS, PLAYED, NOTHING_OF_LABELS, REFUSED]
    assert sum(len(r) for r in rules) == len(set().union(*rules)), "a route has two rules"
    assert routes == set().union(*rules), f"give these a rule: {sorted(routes - set().union(*rules))}"


def _person(svc: Svc, name: str, role: str = "annotator") -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role))


def _shown(body: Any, ids: set[int], texts: set[str]) -> None:
    """The label ids (of objects with a trait) and the strings anywhere in `body`."""
    if isinstance(body, dict):
        if "trait" in body and isinstance(body.get("id"), int):
            ids.add(body["id"])
        for v in body.values():
            _shown(v, ids, texts)
    elif isinstance(body, list):
        for v in body:
            _shown(v, ids, texts)
    elif isinstance(body, str):
        texts.add(body)


def _play_reads(svc: Svc, h: str, readers: dict[str, dict[str, str]], labels: dict[int, str]) -> None:
    """Every read, as each adversary: it shows all of the labels or none (ids and texts), and a route about
    one label answers each alike."""
    c = svc.client
    params = {"trait": "formality", "a": "v1", "b": "v1", "limit": "500"}
    for _, path in sorted(READS):
        url = path.replace("{handle}", h).replace("{namespace}", "acme").replace("{ref}", "v1")
        for name, key in readers.items():
            if "{label_id}" in url:
                answers = {i: c.get(url.replace("{label_id}", str(i)), headers=key) for i in labels}
                assert len({r.status_code for r in answers.values()}) == 1, (path, name, answers)
                continue
            resp = c.get(url, params=params, headers=key)
            if resp.status_code != 200:
                continue
            ids: set[int] = set()
            texts: set[str] = set()
            _shown(resp.json(), ids, texts)
            assert len({i in ids for i in labels}) == 1, (path, name, sorted(ids), labels)
            assert len({t in texts for t in labels.values()}) == 1, (path, name, labels)


def test_neither_one_annotator_nor_two_comparing_notes_tell_gold_apart(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.goldblind"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann, bob = _person(svc, "ann"), _person(svc, "bob")
    check(
        c.patch(f"/v1/models/{h}", json={"votes_wanted": 3, "overlap": 0.5, "gold_rate": 0.5}, headers=owner),
        200,
    )
    meta = [{"source": "forum", "row": i} for i in range(len(ORDINARY))]
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY, "metadata": meta}, headers=owner), 201)
    items = [{"trait": "formality", "text": t, "quality": 1.0, "metadata": {"source": "forum"}} for t in GOLD]
    check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    pool = check(c.get(f"/v1/models/{h}/pool", params={"limit": 500}, headers=ann), 200)["items"]
    ids = {x["text"]: x["id"] for x in pool}
    # One listing: gold carries the time of an import of the pool, not a time of its own, and its metadata.
    times = {x["text"]: x["created_at"] for x in pool}
    assert {times[t] for t in GOLD} <= {times[t] for t in ORDINARY}
    assert all(x["metadata"] and x["metadata"]["source"] == "forum" for x in pool), pool

    # Ordinary, gold, ordinary, gold, ordinary: every count moves by one, every answer reads alike.
    order = [ORDINARY[0], GOLD[0], ORDINARY[1], GOLD[1], ORDINARY[2]]
    label = {"trait": "formality", "quality": 0.0}
    answers = [
        check(c.post(f"/v1/models/{h}/pool/{ids[t]}/label", json=label, headers=ann), 201) for t in order
    ]
    assert [a["buffered_feedback"] for a in answers] == [1, 2, 3, 4, 5]
    assert {(a["stored_as"], a["votes"], a["retraining"]) for a in answers} == {("feedback", 1, False)}
    assert check(c.get(f"/v1/models/{h}", headers=ann), 200)["buffered_feedback"] == 5
    labels = {a["id"]: t for a, t in zip(answers, order, strict=True)}
    mine = check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)
    assert mine["total"] == 5 and {x["id"] for x in mine["items"]} == set(labels)
    team = check(c.get(f"/v1/models/{h}/team", headers=bob), 200)["people"]
    assert sum(p["labels"] for p in team if p["annotator"] == "ann") == 5
    _play_reads(svc, h, {"ann": ann, "bob": bob}, labels)

    # The colleague is handed a gold text ann labelled as a text a colleague labelled.
    served: list[dict[str, Any]] = []
    for _ in range(20):
        ask = {"trait": "formality", "k": 5}
        got = check(c.post(f"/v1/models/{h}/pool/suggest", json=ask, headers=bob), 200)["items"]
        served = [x for x in got if x["text"] in GOLD]
        if served:
            break
    assert served and all(x["overlap"] for x in served)

    # A training folds the buffered labels into the samples: the answers read as samples alike.
    check(c.post(f"/v1/models/{h}/train", json={"reoptimize_params": True}, headers=owner), 202)
    wait_settled(c, h, owner)
    _play_reads(svc, h, {"ann": ann, "bob": bob}, labels)

    # One's own writes answer a gold answer as a label.
    o0, g0, o1, g1 = list(labels)[:4]
    kinds = {x["id"]: x["kind"] for x in check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]}
    changed = [
        c.patch(f"/v1/models/{h}/my-labels/{kinds[i]}/{i}", json={"quality": 0.2}, headers=ann)
        for i in (o0, g0)
    ]
    assert len(set(kinds.values())) == 1 and set(kinds) == set(labels)  # all buffered, or all samples
    assert [r.status_code for r in changed] == [200, 200], [r.text for r in changed]
    refused = [c.delete(f"/v1/models/{h}/feedback/{i}", headers=bob) for i in (o1, g1)]  # a colleague's
    assert [r.status_code for r in refused] == [403, 403], [r.text for r in refused]
    gone = [c.delete(f"/v1/models/{h}/my-labels/{kinds[i]}/{i}", headers=ann) for i in (o1, g1)]
    assert [r.status_code for r in gone] == [200, 200], [r.text for r in gone]
    _play_reads(svc, h, {"ann": ann, "bob": bob}, {i: t for i, t in labels.items() if i not in (o1, g1)})
    undone = [
        c.delete(f"/v1/models/{h}/pool/{ids[t]}/label", params={"trait": "formality"}, headers=ann)
        for t in order[:2]
    ]
    assert [r.status_code for r in undone] == [200, 200], [r.text for r in undone]
    assert check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["total"] == 1


def test_a_path_template_names_only_known_parameters() -> None:
    """The plays above fill these parameters; a read with another one needs its value here first."""
    known = {"handle", "namespace", "ref", "label_id"}
    for _, path in READS:
        assert set(re.findall(r"{(\w+)}", path)) <= known, path


def test_answers_fill_the_buffer_and_retrain_as_labels_do(svc: Svc) -> None:
    """A buffer of answers starts the automatic retraining a buffer of labels would (retrain_buffer is 3 in
    the test settings), and the retraining folds them into the samples as it folds labels."""
    c, owner, h = svc.client, svc.author, "acme.goldretrain"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann = _person(svc, "ann")
    check(c.patch(f"/v1/models/{h}", json={"review": False, "auto_retrain": True}, headers=owner), 200)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    checks = [*GOLD, "A gold text whose answer is known, three."]
    gold = {"items": [{"trait": "formality", "text": t, "quality": 1.0} for t in checks]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    pool = check(c.get(f"/v1/models/{h}/pool", params={"limit": 500}, headers=ann), 200)["items"]
    ids = {x["text"]: x["id"] for x in pool}
    label = {"trait": "formality", "quality": 0.0}
    answers = [
        check(c.post(f"/v1/models/{h}/pool/{ids[t]}/label", json=label, headers=ann), 201) for t in checks
    ]
    assert [(a["buffered_feedback"], a["retraining"]) for a in answers] == [(1, False), (2, False), (3, True)]
    model = wait_settled(c, h, ann)
    assert model["last_operation"]["kind"] == "retrain", model["last_operation"]
    assert model["last_operation"]["status"] == "succeeded" and model["buffered_feedback"] == 0
    mine = check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]
    assert {(x["kind"], x["trained"]) for x in mine} == {("sample", True)}


def test_answers_move_agreement_as_labels_do(svc: Svc) -> None:
    """Two people agree on an ordinary text and disagree on a gold one: the agreement route and the Team
    page count both texts, and a colleague who answered neither reads the disagreed gold text as any."""
    c, owner, h = svc.client, svc.author, "acme.goldagree"
    make_model(c, owner, h)
    check(c.patch(f"/v1/models/{h}", json={"votes_wanted": 2}, headers=owner), 200)
    people = {name: _person(svc, name) for name in ("ann", "bob", "carl")}
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    gold = {"items": [{"trait": "formality", "text": GOLD[0], "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    pool = check(c.get(f"/v1/models/{h}/pool", params={"limit": 500}, headers=owner), 200)["items"]
    ids = {x["text"]: x["id"] for x in pool}
    for name, text, quality in [("ann", ORDINARY[0], 1.0), ("bob", ORDINARY[0], 1.0), ("ann", GOLD[0], 1.0)]:
        label = {"trait": "formality", "quality": quality}
        check(c.post(f"/v1/models/{h}/pool/{ids[text]}/label", json=label, headers=people[name]), 201)
    label = {"trait": "formality", "quality": 0.0}
    check(c.post(f"/v1/models/{h}/pool/{ids[GOLD[0]]}/label", json=label, headers=people["bob"]), 201)
    for name, key in people.items():
        got = check(c.get(f"/v1/models/{h}/agreement", headers=key), 200)["traits"]["formality"]
        [pair] = [p for p in got["pairwise"] if {p["a"], p["b"]} == {"ann", "bob"}]
        assert (pair["texts"], pair["same_pole"]) == (2, 1), (name, pair)
        assert [t["text"] for t in got["disagreed"]] == [GOLD[0]], (name, got["disagreed"])
        team = check(c.get(f"/v1/models/{h}/team", headers=key), 200)["people"]
        pairs = {(p["annotator"], p["compared_others"], p["agreement_others"]) for p in team}
        assert {("ann", 2, 0.5), ("bob", 2, 0.5)} <= pairs, (name, pairs)


def test_at_one_vote_wanted_a_gold_text_a_colleague_answered_reads_as_a_fresh_text(svc: Svc) -> None:
    """The default campaign (one vote a text, no overlap) never hands out an ordinary text a colleague
    labelled, nor answers a label with more than one vote: a gold text ann answered comes to bob as a fresh
    text, and his answer counts one vote, as each of his labels does. One annotator alone could tell
    otherwise."""
    c, owner, h = svc.client, svc.author, "acme.goldone"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann, bob = _person(svc, "ann"), _person(svc, "bob")
    check(c.patch(f"/v1/models/{h}", json={"gold_rate": 0.5}, headers=owner), 200)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    items = [{"trait": "formality", "text": GOLD[0], "quality": 1.0}]
    check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    ids = {x["text"]: x["id"] for x in check(c.get(f"/v1/models/{h}/pool", headers=ann), 200)["items"]}
    label = {"trait": "formality", "quality": 1.0}
    check(c.post(f"/v1/models/{h}/pool/{ids[GOLD[0]]}/label", json=label, headers=ann), 201)

    served: list[dict[str, Any]] = []
    for _ in range(20):
        got = check(
            c.post(f"/v1/models/{h}/pool/suggest", json={"trait": "formality", "k": 5}, headers=bob), 200
        )
        served = [x for x in got["items"] if x["text"] == GOLD[0]]
        if served:
            break
    assert served and not any(x["overlap"] for x in got["items"]), got["items"]
    answers = [
        check(c.post(f"/v1/models/{h}/pool/{ids[t]}/label", json=label, headers=bob), 201)
        for t in (ORDINARY[0], GOLD[0])
    ]
    assert [a["votes"] for a in answers] == [1, 1] and {a["votes_wanted"] for a in answers} == {1}


def test_a_reviewer_decides_answers_as_labels_on_a_reviewed_model(svc: Svc) -> None:
    """On a reviewed model ann's answers wait in the review queue as her labels; after a training (which
    takes no pending label in) the reviewer accepts a label and an answer, rejects a pair and corrects a
    pair: every route ann reads shows each answer decided as its label, in the buffer until the next
    training takes the accepted ones in. Accuracy counts every answer as she gave it, rejected or
    corrected: it measures her, not the reviewer."""
    c, owner, h = svc.client, svc.author, "acme.goldreview"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann, bob, rita = _person(svc, "ann"), _person(svc, "bob"), _person(svc, "rita", "reviewer")
    check(c.patch(f"/v1/models/{h}", json={"review": True, "auto_retrain": False}, headers=owner), 200)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    checks = [*GOLD, "A gold text whose answer is known, three."]
    items = [{"trait": "formality", "text": t, "quality": 1.0} for t in checks]
    check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    ids = {x["text"]: x["id"] for x in check(c.get(f"/v1/models/{h}/pool", headers=ann), 200)["items"]}
    order = [t for pair in zip(ORDINARY, checks, strict=False) for t in pair]  # ordinary, gold, …
    label = {"trait": "formality", "quality": 0.0}
    given = [
        check(c.post(f"/v1/models/{h}/pool/{ids[t]}/label", json=label, headers=ann), 201) for t in order
    ]
    labels = {a["id"]: t for a, t in zip(given, order, strict=True)}
    o0, g0, o1, g1, o2, g2 = labels
    queue = check(c.get(f"/v1/models/{h}/review", params={"limit": 500}, headers=rita), 200)
    assert [(x["id"], x["annotator"], x["status"]) for x in queue["items"]] == [
        (i, "ann", "pending") for i in labels
    ]
    check(c.post(f"/v1/models/{h}/train", json={"reoptimize_params": True}, headers=owner), 202)
    wait_settled(c, h, owner)

    def decide(decision: str, pair: tuple[int, int], comment: str | None = None) -> None:
        body = {
            "decision": decision,
            "items": [{"kind": "feedback", "id": i} for i in pair],
            "comment": comment,
        }
        assert check(c.post(f"/v1/models/{h}/review", json=body, headers=rita), 200)["reviewed"] == 2

    decide("accept", (o0, g0))
    decide("reject", (o1, g1), "Too formal.")
    for i in (o2, g2):
        fix = {"quality": 1.0, "comment": "Informal."}
        check(c.post(f"/v1/models/{h}/labels/{i}/correct", json=fix, headers=rita), 200)

    def read_alike() -> None:
        """Each ordinary label and its gold twin read alike on every route ann reads about her labels."""
        mine = {x["id"]: x for x in check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]}
        decided: dict[int, Any] = {}
        for status in ("accepted", "rejected", "pending"):
            got = check(c.get(f"/v1/models/{h}/review", params={"status": status}, headers=ann), 200)
            decided |= {x["id"]: x for x in got["items"]}
            assert [(p["accepted"], p["rejected"], p["pending"]) for p in got["people"]] == [(4, 2, 0)]
        votes = check(c.get(f"/v1/models/{h}/votes", params={"limit": 500}, headers=ann), 200)["items"]
        voted = {x["id"]: x for x in votes}
        for o, g in ((o0, g0), (o1, g1), (o2, g2)):
            seen = [
                (
                    {k: v for k, v in mine[i].items() if k not in ("id", "text", "created_at", "metadata")},
                    {k: v for k, v in decided[i].items() if k not in ("id", "text", "created_at")},
                    {k: v for k, v in voted[i].items() if k not in ("id", "text", "created_at")},
                    [
                        {k: v for k, v in x.items() if k not in ("id", "text", "created_at")}
                        for x in check(c.get(f"/v1/models/{h}/labels/{i}/history", headers=ann), 200)[
                            "corrections"
                        ]
                    ],
                )
                for i in (o, g)
            ]
            assert seen[0] == seen[1], seen
        assert {mine[i]["review"] for i in (o1, g1)} == {"rejected"}
        assert {(decided[i]["reviewed_by"], decided[i]["original_quality"]) for i in (o2, g2)} == {
            ("rita", 0.0)
        }
        _play_reads(svc, h, {"ann": ann, "bob": bob}, labels)

    read_alike()  # decided after the training started: the accepted ones wait for the next one
    assert {
        mine["kind"] for mine in check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]
    } == {"feedback"}
    check(c.post(f"/v1/models/{h}/train", json={"reoptimize_params": True}, headers=owner), 202)
    wait_settled(c, h, owner)
    read_alike()
    kinds = {
        x["id"]: (x["kind"], x["trained"])
        for x in check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]
    }
    assert kinds == {i: ("sample", True) for i in (o0, g0, o2, g2)} | {
        i: ("feedback", False) for i in (o1, g1)
    }
    people = check(c.get(f"/v1/models/{h}/gold/accuracy", headers=owner), 200)["people"]
    assert [(p["annotator"], p["answered"], p["correct"]) for p in people] == [("ann", 3, 0)]


def test_the_agreement_rule_accepts_answers_as_labels(svc: Svc) -> None:
    """Two people agree on an ordinary text and on a gold one: the owner's agreement rule accepts both
    pairs, and each reads the answer accepted as the label."""
    c, owner, h = svc.client, svc.author, "acme.goldrule"
    make_model(c, owner, h)
    rule = {"review": True, "accept_rule": "agreement", "votes_wanted": 2}
    check(c.patch(f"/v1/models/{h}", json=rule, headers=owner), 200)
    people = {name: _person(svc, name) for name in ("ann", "bob")}
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    gold = {"items": [{"trait": "formality", "text": GOLD[0], "quality": 0.0}]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    ids = {x["text"]: x["id"] for x in check(c.get(f"/v1/models/{h}/pool", headers=owner), 200)["items"]}
    label = {"trait": "formality", "quality": 1.0}
    for name in ("ann", "bob"):
        for text in (ORDINARY[0], GOLD[0]):
            check(c.post(f"/v1/models/{h}/pool/{ids[text]}/label", json=label, headers=people[name]), 201)
    for name, key in people.items():
        mine = check(c.get(f"/v1/models/{h}/my-labels", headers=key), 200)["items"]
        assert [x["review"] for x in mine] == ["accepted", "accepted"], (name, mine)
        got = check(c.get(f"/v1/models/{h}/review", params={"status": "accepted"}, headers=key), 200)
        assert [(x["text"], x["reviewed_by"]) for x in got["items"]] == [
            (ORDINARY[0], "agreement"),
            (GOLD[0], "agreement"),
        ], (name, got["items"])


def test_removing_a_persons_labels_takes_their_answers_and_the_undo_brings_them_back(svc: Svc) -> None:
    """An owner's removal of ann's labels takes her gold answers with them, counted as the labels they read
    as, and its undo puts them back by the same ids: before, during and after, every count and list ann
    reads holds her answers exactly where it holds her labels (a removal that left them would leave her
    `my-labels` listing exactly her gold texts)."""
    c, owner, h = svc.client, svc.author, "acme.goldremove"
    make_model(c, owner, h)
    ann = _person(svc, "ann")
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ORDINARY}, headers=owner), 201)
    items = [{"trait": "formality", "text": t, "quality": 1.0} for t in GOLD]
    check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    ids = {x["text"]: x["id"] for x in check(c.get(f"/v1/models/{h}/pool", headers=ann), 200)["items"]}
    label = {"trait": "formality", "quality": 0.0}

    def give(texts: list[str]) -> list[int]:
        return [
            check(c.post(f"/v1/models/{h}/pool/{ids[t]}/label", json=label, headers=ann), 201)["id"]
            for t in texts
        ]

    labels = give([ORDINARY[0], GOLD[0]])  # samples of the draft, trained into v1
    train_ready(c, owner, h)
    labels += give([ORDINARY[1], GOLD[1]])  # buffered

    def seen() -> dict[str, Any]:
        """What ann reads of her labels: her list, her model's counters, her line on the Team page."""
        model = check(c.get(f"/v1/models/{h}", headers=ann), 200)
        traits = check(c.get(f"/v1/models/{h}/traits", headers=ann), 200)
        team = check(c.get(f"/v1/models/{h}/team", headers=ann), 200)["people"]
        votes = check(c.get(f"/v1/models/{h}/votes", params={"limit": 1000}, headers=ann), 200)["items"]
        return {
            "mine": check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200),
            "counts": (model["sample_count"], model["buffered_feedback"]),
            "traits": traits,
            "team": [(p["labels"], p["labels_today"]) for p in team if p["annotator"] == "ann"],
            "votes": sorted((v["id"], v["kind"], v["version_no"]) for v in votes if v["annotator"] == "ann"),
        }

    before = seen()
    assert before["mine"]["total"] == 4 and {x["id"] for x in before["mine"]["items"]} == set(labels)
    assert {x["kind"] for x in before["mine"]["items"]} == {"sample", "feedback"}
    out = check(c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=owner), 200)
    assert out["removed"] == {"samples": 2, "feedback": 2, "unsure": 0} and out["undo"]
    during = seen()
    assert (during["mine"]["total"], during["mine"]["items"]) == (0, []), during["mine"]
    assert during["counts"] == (before["counts"][0] - 2, 0) and during["votes"] == []
    assert during["team"] in ([], [(0, 0)]), during["team"]
    accuracy = check(c.get(f"/v1/models/{h}/gold/accuracy", headers=owner), 200)["people"]
    assert [p["annotator"] for p in accuracy if p["answered"]] == []
    events = check(c.get("/v1/namespaces/acme/audit", headers=owner), 200)["items"]
    assert (events[0]["kind"], events[0]["detail"]["gold"]) == ("labels_removed", 2)

    back = check(c.post(f"/v1/models/{h}/labels/restore", json={"undo": out["undo"]}, headers=owner), 200)
    assert back["restored"] == out["removed"]
    assert seen() == before
    accuracy = check(c.get(f"/v1/models/{h}/gold/accuracy", headers=owner), 200)["people"]
    assert [(p["annotator"], p["answered"]) for p in accuracy] == [("ann", 2)]
