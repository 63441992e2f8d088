"""The review rule over every route that can change a label (docs/api.md "Review"): on a model under review, a
change of an accepted label's text, trait or quality by an annotator is a new proposal, pending until a
reviewer accepts it, whichever route makes it; the same change by a reviewer or an owner is their own
judgement and stays accepted. A label an annotator changes never trains unseen: what of theirs is accepted
after the change is only what was accepted before.

One world for the whole module: a draft and a trained model under review, with an annotator, a reviewer and
an owner who each hold accepted labels; every cell gives its caller a fresh accepted label and changes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.service.test_auth_matrix import OPERATIONS
from tests.support.service import Svc, _migrate, auth, check, make_model, running, train_ready

DRAFT = "acme.review-draft"  # samples and pool labels: edits need a draft
TRAINED = "acme.review-fed"  # buffered feedback labels: feedback needs a version
OPEN = "acme.review-off"  # a model whose owner turned review off
PEOPLE = {"ann": "annotator", "rev": "reviewer", "olga": "owner"}

#: (kind, trait, text, quality): what a label says.
Content = tuple[str, str, str, float]


@dataclass(frozen=True)
class World:
    svc: Svc
    keys: dict[str, dict[str, str]]
    texts: Iterator[int]

    def text(self) -> str:
        return f"Label text number {next(self.texts)}, as its author first wrote it."


@dataclass(frozen=True)
class Label:
    handle: str
    kind: str  # sample | feedback
    id: int
    pool_id: int | None
    text: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("review-routes")
    url = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    _migrate(url)
    with running(data_dir, database_url=url) as svc:
        c = svc.client
        with transaction(svc.ctx.sessions) as s:
            keys = {
                name: auth(create_key(s, ["acme"], "authoring", name, role)) for name, role in PEOPLE.items()
            }
        make_model(c, svc.author, DRAFT, review=True)
        make_model(c, svc.author, OPEN, review=False)
        make_model(c, svc.author, TRAINED, review=True)
        train_ready(c, svc.author, TRAINED)
        # Paused, so feedback labels stay buffered (the test settings retrain at 3).
        check(c.patch(f"/v1/models/{TRAINED}", json={"auto_retrain": False}, headers=svc.author), 200)
        yield World(svc, keys, itertools.count())


def accept(w: World, label: Label) -> None:
    """The reviewer accepts the label (a reviewer's or an owner's own is accepted already)."""
    body = {"decision": "accept", "items": [{"kind": label.kind, "id": label.id}]}
    check(w.svc.client.post(f"/v1/models/{label.handle}/review", json=body, headers=w.keys["rev"]), 200)


def a_vote(w: World, who: str, handle: str = DRAFT) -> Label:
    text = w.text()
    body = {"samples": [{"trait": "formality", "text": text, "quality": 1.0}]}
    ids = check(w.svc.client.post(f"/v1/models/{handle}/samples", json=body, headers=w.keys[who]), 201)["ids"]
    return Label(handle, "sample", ids[0], None, text)


def a_pool_label(w: World, who: str) -> Label:
    text, c = w.text(), w.svc.client
    pid = check(c.post(f"/v1/models/{DRAFT}/pool", json={"texts": [text]}, headers=w.svc.author), 201)["ids"][
        0
    ]
    body = {"trait": "formality", "quality": 1.0}
    got = check(c.post(f"/v1/models/{DRAFT}/pool/{pid}/label", json=body, headers=w.keys[who]), 201)
    assert got["stored_as"] == "sample"
    return Label(DRAFT, "sample", got["id"], pid, text)


def a_feedback_label(w: World, who: str) -> Label:
    text, c = w.text(), w.svc.client
    body = {"content": text, "feedback": [{"trait": "formality", "quality": 1.0}]}
    check(c.post(f"/v1/models/{TRAINED}/score", json=body, headers=w.keys[who]), 200)
    mine = check(c.get(f"/v1/models/{TRAINED}/my-labels", params={"q": text}, headers=w.keys[who]), 200)
    [item] = mine["items"]
    return Label(TRAINED, "feedback", item["id"], None, text)


def labels(w: World, status: str) -> set[tuple[str, Content]]:
    """(annotator, content) of every label of the three models in `status`, as a reviewer's queue lists
    them."""
    out: set[tuple[str, Content]] = set()
    for handle in (DRAFT, TRAINED, OPEN):
        page = check(
            w.svc.client.get(
                f"/v1/models/{handle}/review", params={"status": status, "limit": 500}, headers=w.keys["rev"]
            ),
            200,
        )
        assert page["next_cursor"] is None  # the module's labels fit in one page
        out |= {(i["annotator"], (i["kind"], i["trait"], i["text"], i["quality"])) for i in page["items"]}
    return out


@dataclass(frozen=True)
class Route:
    """One way to change a label: `given` makes the caller an accepted label of the kind the route changes,
    `change` sends the change through `method` `path`; `content` is what the label says afterwards."""

    method: str
    path: str
    given: Callable[[World, str], Label]
    change: Callable[[World, dict[str, str], Label], httpx.Response]
    content: Callable[[Label], Content]


def _patch_sample(
    body: Callable[[Label], dict[str, Any]],
) -> Callable[[World, dict[str, str], Label], httpx.Response]:
    def change(w: World, key: dict[str, str], label: Label) -> httpx.Response:
        return w.svc.client.patch(
            f"/v1/models/{label.handle}/samples/{label.id}", json=body(label), headers=key
        )

    return change


def _patch_mine(w: World, key: dict[str, str], label: Label) -> httpx.Response:
    path = f"/v1/models/{label.handle}/my-labels/{label.kind}/{label.id}"
    return w.svc.client.patch(path, json={"quality": 0.0}, headers=key)


def _vote_again(w: World, key: dict[str, str], label: Label) -> httpx.Response:
    body = {"samples": [{"trait": "formality", "text": label.text, "quality": 0.0}]}
    return w.svc.client.post(f"/v1/models/{label.handle}/samples", json=body, headers=key)


def _pool_label_again(w: World, key: dict[str, str], label: Label) -> httpx.Response:
    path = f"/v1/models/{label.handle}/pool/{label.pool_id}/label"
    return w.svc.client.post(path, json={"trait": "formality", "quality": 0.0}, headers=key)


def _feedback_again(w: World, key: dict[str, str], label: Label) -> httpx.Response:
    body = {"content": label.text, "feedback": [{"trait": "formality", "quality": 0.0}]}
    return w.svc.client.post(f"/v1/models/{label.handle}/score", json=body, headers=key)


def _suggested_again(w: World, key: dict[str, str], label: Label) -> httpx.Response:
    body = {
        "model": label.handle,
        "comment": {"text": label.text},
        "attributeScores": {"FORMALITY": {"summaryScore": {"value": 0}}},
    }
    return w.svc.client.post(SUGGEST, json=body, headers=key)


def _rewritten(label: Label) -> str:
    return label.text.replace("as its author first wrote it", "rewritten to say anything at all")


SAMPLE = "/v1/models/{handle}/samples/{sample_id}"
MINE = "/v1/models/{handle}/my-labels/{kind}/{label_id}"
SUGGEST = "/v1alpha1/comments:suggestscore"


def _negative(kind: str) -> Callable[[Label], Content]:
    return lambda x: (kind, "formality", x.text, 0.0)


ROUTES: dict[str, Route] = {
    "PATCH samples: text": Route(
        "PATCH",
        SAMPLE,
        a_vote,
        _patch_sample(lambda x: {"text": _rewritten(x)}),
        lambda x: ("sample", "formality", _rewritten(x), 1.0),
    ),
    "PATCH samples: quality": Route(
        "PATCH", SAMPLE, a_vote, _patch_sample(lambda x: {"quality": 0.0}), _negative("sample")
    ),
    "PATCH samples: trait": Route(
        "PATCH",
        SAMPLE,
        a_vote,
        _patch_sample(lambda x: {"trait": "sentiment"}),
        lambda x: ("sample", "sentiment", x.text, 1.0),
    ),
    "PATCH samples: text and quality": Route(
        "PATCH",
        SAMPLE,
        a_vote,
        _patch_sample(lambda x: {"text": _rewritten(x), "quality": 0.0}),
        lambda x: ("sample", "formality", _rewritten(x), 0.0),
    ),
    "PATCH my-labels: a vote": Route("PATCH", MINE, a_vote, _patch_mine, _negative("sample")),
    "PATCH my-labels: a pool label": Route("PATCH", MINE, a_pool_label, _patch_mine, _negative("sample")),
    "PATCH my-labels: a buffered feedback label": Route(
        "PATCH", MINE, a_feedback_label, _patch_mine, _negative("feedback")
    ),
    "POST samples: the text again, another quality": Route(
        "POST", "/v1/models/{handle}/samples", a_vote, _vote_again, _negative("sample")
    ),
    "POST pool label: the text again, another quality": Route(
        "POST",
        "/v1/models/{handle}/pool/{text_id}/label",
        a_pool_label,
        _pool_label_again,
        _negative("sample"),
    ),
    "POST score: feedback on the text again, another quality": Route(
        "POST", "/v1/models/{handle}/score", a_feedback_label, _feedback_again, _negative("feedback")
    ),
    "POST suggestscore: Perspective's feedback on the text again": Route(
        "POST", SUGGEST, a_feedback_label, _suggested_again, _negative("feedback")
    ),
}

# The other writes an annotator may send, none of which gives a label a text, trait or quality: each says why.
NO_LABEL_CHANGE = {
    ("POST", "/v1/models/{handle}/pool/suggest"): "claims texts to label",
    ("DELETE", "/v1/models/{handle}/pool/{text_id}/claim"): "lets a claim go",
    ("POST", "/v1/models/{handle}/unsure"): "an unsure mark, which never trains",
    ("POST", "/v1/models/{handle}/comments"): "a comment, which never trains",
    ("POST", "/v1/models/{handle}/guidelines/read"): "a read mark",
    ("DELETE", MINE): "a withdrawal: nothing of the label is left to train",
    ("DELETE", "/v1/models/{handle}/pool/{text_id}/label"): "a withdrawal",
    ("DELETE", SAMPLE): "a withdrawal",
}


@pytest.mark.parametrize("who", list(PEOPLE))
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_changed_label_trains_only_once_someone_who_may_review_accepted_it(
    world: World, route: str, who: str
) -> None:
    """The caller's accepted label changed through the route: an annotator's change waits in the queue as
    pending and nothing of theirs is accepted that was not before; a reviewer's or an owner's is accepted."""
    r = ROUTES[route]
    label = r.given(world, who)
    if who == "ann":
        accept(world, label)
    accepted = labels(world, "accepted")
    assert (who, r.content(label)) not in accepted  # the change is a change
    resp = r.change(world, world.keys[who], label)
    assert resp.status_code in (200, 201), resp.text
    now_accepted = labels(world, "accepted")
    if who == "ann":
        # Nothing of ann's is accepted that was not before: the changed label waits in the queue.
        assert {x for x in now_accepted if x[0] == "ann"} <= {x for x in accepted if x[0] == "ann"}
        assert ("ann", r.content(label)) in labels(world, "pending")
    else:  # a reviewer's or an owner's change is their own judgement
        assert (who, r.content(label)) in now_accepted


def test_an_annotators_edit_on_a_model_without_review_stays_accepted(world: World) -> None:
    """Without review, an annotator's labels train as given, edited ones too."""
    label = a_vote(world, "ann", OPEN)
    check(
        world.svc.client.patch(
            f"/v1/models/{OPEN}/samples/{label.id}",
            json={"text": _rewritten(label)},
            headers=world.keys["ann"],
        ),
        200,
    )
    assert ("ann", ("sample", "formality", _rewritten(label), 1.0)) in labels(world, "accepted")


def test_a_rejected_label_the_annotator_changes_waits_again_without_the_old_verdict(world: World) -> None:
    """A rejected label the annotator corrects is a new proposal: pending, with no reviewer's name or comment
    from the verdict on what it said before."""
    c, label = world.svc.client, a_vote(world, "ann")
    body = {"decision": "reject", "items": [{"kind": "sample", "id": label.id}], "comment": "Too vague."}
    check(c.post(f"/v1/models/{DRAFT}/review", json=body, headers=world.keys["rev"]), 200)
    check(
        c.patch(f"/v1/models/{DRAFT}/samples/{label.id}", json={"quality": 0.0}, headers=world.keys["ann"]),
        200,
    )
    page = check(c.get(f"/v1/models/{DRAFT}/review", params={"limit": 500}, headers=world.keys["rev"]), 200)
    [item] = [i for i in page["items"] if i["id"] == label.id and i["kind"] == "sample"]
    assert (item["status"], item["reviewed_by"], item["comment"], item["quality"]) == (
        "pending",
        None,
        None,
        0.0,
    )


def test_every_write_an_annotator_may_send_is_in_the_matrix_or_says_why_not() -> None:
    """The writes an annotator may send (the auth matrix's operations of the `label` action, edits and
    deletes of their own samples, Perspective's feedback) are each a route of this matrix or one that changes
    no label's text, trait or quality; a new label route fails here until it is placed."""
    writes = {(op.method, op.path) for op in OPERATIONS if op.action == "label" and op.method != "GET"}
    writes |= {("PATCH", SAMPLE), ("DELETE", SAMPLE), ("POST", SUGGEST)}
    covered = {(r.method, r.path) for r in ROUTES.values()}
    assert not writes - covered - set(NO_LABEL_CHANGE), (
        f"place these: {sorted(writes - covered - set(NO_LABEL_CHANGE))}"
    )
    assert not (covered | set(NO_LABEL_CHANGE)) - writes, "the matrix names a route annotators cannot write"
