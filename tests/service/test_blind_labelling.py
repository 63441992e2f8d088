"""Blind labelling over every route that returns votes or notes, every role, and texts voted on or not: with
`blind_labelling` on, an annotator sees a colleague's vote, buffered feedback label, unsure mark, comment or
disagreement on a text only once they voted on it; the author, reviewers and owners see all of it
(docs/api.md, "Blind labelling"; the routes' answers as tests/service/test_auth_matrix.py's BLIND_READS)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.service.test_auth_matrix import BLIND_READS
from tests.support.service import Svc, _migrate, auth, check, make_model, running, train_ready

H = "acme.blind-walk"
TEXTS = [f"Carol's text number {i}, to be judged." for i in range(4)]
ANN_VOTED = {0, 1}  # the texts the blind annotator voted on


@dataclass(frozen=True)
class World:
    svc: Svc
    keys: dict[str, dict[str, str]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """carol (annotator) voted on, noted and gave feedback on every text, a rater's import disagrees with
    her on each; ann (annotator) voted on two of them; then blind labelling was turned on."""
    data_dir = tmp_path_factory.mktemp("blind")
    url = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    _migrate(url)
    with running(data_dir, database_url=url) as svc:
        c = svc.client
        make_model(c, svc.author, H)
        with transaction(svc.ctx.sessions) as s:
            keys = {
                name: auth(create_key(s, ["acme"], "authoring", name, role))
                for name, role in (("ann", "annotator"), ("carol", "annotator"), ("rev", "reviewer"))
            }
        keys["owner"] = svc.author

        def post(key: dict[str, str], rows: list[dict[str, object]]) -> None:
            check(c.post(f"/v1/models/{H}/samples", json={"samples": rows}, headers=key), 201)

        post(keys["carol"], [{"trait": "formality", "text": t, "quality": 1.0} for t in TEXTS])
        post(
            svc.author,
            [{"trait": "formality", "text": t, "quality": 0.0, "annotator": "rater-x"} for t in TEXTS],
        )
        post(
            keys["ann"], [{"trait": "formality", "text": TEXTS[i], "quality": 1.0} for i in sorted(ANN_VOTED)]
        )
        for t in TEXTS:
            note = {"trait": "formality", "text": t}
            check(
                c.post(f"/v1/models/{H}/comments", json={**note, "body": "Hm."}, headers=keys["carol"]), 201
            )
            check(c.post(f"/v1/models/{H}/unsure", json=note, headers=keys["carol"]), 201)
        train_ready(c, svc.author, H)  # feedback needs a version to score
        # Paused, so the labels stay buffered (the test settings retrain at 3).
        check(c.patch(f"/v1/models/{H}", json={"auto_retrain": False}, headers=svc.author), 200)
        for t in TEXTS:
            score = {"content": t, "feedback": [{"trait": "formality", "quality": 1.0}]}
            check(c.post(f"/v1/models/{H}/score", json=score, headers=keys["carol"]), 200)
        check(c.patch(f"/v1/models/{H}", json={"blind_labelling": True}, headers=svc.author), 200)
        yield World(svc, keys)


@settings(max_examples=60, deadline=None)
@given(
    route=st.sampled_from(sorted(BLIND_READS)),
    who=st.sampled_from(["ann", "carol", "rev", "owner"]),
    text=st.sampled_from(range(len(TEXTS))),
)
def test_a_blind_annotator_sees_colleagues_work_only_on_texts_they_voted_on(
    world: World, route: str, who: str, text: int
) -> None:
    resp = world.svc.client.get(f"/v1/models/{H}/{route}", headers=world.keys[who])
    shown = set(BLIND_READS[route](check(resp, 200)))
    sees = who != "ann" or text in ANN_VOTED
    assert (TEXTS[text] in shown) is sees, (route, who, text)


def test_the_history_of_one_s_own_labels_shows_no_colleague_s(world: World) -> None:
    """ "My labels" on a blind model: each person's own votes and buffered labels, never a colleague's, and
    nothing of the texts they did not label."""
    own = {"ann": {TEXTS[i] for i in ANN_VOTED}, "carol": set(TEXTS), "rev": set(), "owner": set()}
    for who, expected in own.items():
        body = check(
            world.svc.client.get(f"/v1/models/{H}/my-labels?limit=500", headers=world.keys[who]), 200
        )
        assert {i["text"] for i in body["items"]} & set(TEXTS) == expected, who
        kinds = {i["kind"] for i in body["items"] if i["text"] in TEXTS}
        assert kinds == ({"sample", "feedback"} if who == "carol" else {"sample"} if expected else set()), who
