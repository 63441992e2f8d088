"""The evaluation set is held out, through the real service: a pool import leaves its texts out, suggestions
never hand one out, a sample import says how many of its rows are evaluation texts, and an evaluation leaves
out (and counts) the texts the version trained on, by the version's own record of them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.service.test_evaluation import HELD_OUT
from tests.service.test_pool import UNLABELLED
from tests.support.service import (
    CASUAL,
    FORMAL,
    POSITIVE,
    Svc,
    check,
    evaluate_version,
    make_model,
    train_ready,
)

EVAL_TEXTS = [
    "The shareholders are cordially invited to the general assembly.",
    "ugh monday again, whatever",
    "What a lovely surprise, thank you all so much!",
]


def _add_items(svc: Svc, handle: str, items: list[tuple[str, str, float]]) -> None:
    body = {"items": [{"trait": t, "text": x, "quality": q} for t, x, q in items]}
    check(svc.client.post(f"/v1/models/{handle}/evaluation-set", json=body, headers=svc.author), 201)


def _evaluate(svc: Svc, handle: str, ref: str = "v1") -> dict[str, Any]:
    return evaluate_version(svc.client, svc.author, handle, ref)


def test_pool_import_leaves_out_evaluation_texts_and_says_how_many(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldpool"
    make_model(c, h, handle)
    # An evaluation text of any trait is held out of the whole model.
    _add_items(svc, handle, [("formality", EVAL_TEXTS[0], 1.0), ("sentiment", EVAL_TEXTS[1], 0.0)])
    texts = [UNLABELLED[0], EVAL_TEXTS[0], f"  {EVAL_TEXTS[1]} ", UNLABELLED[1], EVAL_TEXTS[0]]
    added = check(c.post(f"/v1/models/{handle}/pool", json={"texts": texts}, headers=h), 201)
    assert added["added"] == 2 and added["in_evaluation_set"] == 3
    pool = check(c.get(f"/v1/models/{handle}/pool", headers=h), 200)
    assert [p["text"] for p in pool["items"]] == UNLABELLED[:2] and pool["total"] == 2
    assert added["ids"] == [p["id"] for p in pool["items"]]  # the texts kept, in input order
    # Re-sending the batch stores nothing more and says the same.
    again = check(c.post(f"/v1/models/{handle}/pool", json={"texts": texts}, headers=h), 201)
    assert again == {
        "ids": added["ids"],
        "added": 0,
        "in_evaluation_set": 3,
        "duplicates": [0, 3],
        "labelled": 0,
    }


def test_suggestions_never_hand_out_an_evaluation_text(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldsuggest"
    make_model(c, h, handle)
    # The pool was imported before these texts joined the evaluation set.
    check(c.post(f"/v1/models/{handle}/pool", json={"texts": UNLABELLED + EVAL_TEXTS}, headers=h), 201)
    _add_items(svc, handle, [("formality", EVAL_TEXTS[0], 1.0), ("formality", EVAL_TEXTS[1], 0.0)])
    _add_items(svc, handle, [("sentiment", EVAL_TEXTS[2], 1.0)])
    # Another annotator labelled an evaluation text: an overlap candidate for this key, but held out.
    colleague = svc.key(["acme"], "authoring")
    sample = {"trait": "formality", "text": EVAL_TEXTS[0], "quality": 1.0}
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": [sample]}, headers=colleague), 201)
    url = f"/v1/models/{handle}/pool/suggest"
    for mode in ("auto", "typical", "diverse", "uncertain", "positive", "negative"):
        for overlap in (0.0, 0.5):
            body = {"trait": "formality", "k": 100, "mode": mode, "overlap": overlap}
            got = check(c.post(url, json=body, headers=h), 200)
            texts = {item["text"] for item in got["items"]}
            assert not texts & set(EVAL_TEXTS), (mode, overlap)
            assert texts <= set(UNLABELLED) and len(texts) > 0
            assert got["pool_size"] == len(UNLABELLED) + len(EVAL_TEXTS)
            assert got["unlabelled"] == len(UNLABELLED)  # evaluation texts are not left to label


def test_a_sample_import_of_evaluation_texts_is_stored_and_counted(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldsamples"
    make_model(c, h, handle)
    _add_items(svc, handle, [("formality", EVAL_TEXTS[0], 1.0), ("sentiment", EVAL_TEXTS[1], 0.0)])
    rows = [
        {"trait": "formality", "text": EVAL_TEXTS[0], "quality": 1.0},
        {"trait": "sentiment", "text": EVAL_TEXTS[0], "quality": 1.0},  # any trait: the text is held out
        {"trait": "formality", "text": f" {EVAL_TEXTS[1]}  ", "quality": 0.0},
        {"trait": "formality", "text": "A text of no evaluation item.", "quality": 0.0},
    ]
    answer = check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows}, headers=h), 201)
    assert answer["in_evaluation_set"] == 3 and len(set(answer["ids"])) == 4
    listed = check(c.get(f"/v1/models/{handle}/samples?limit=500", headers=h), 200)["items"]
    assert set(answer["ids"]) <= {s["id"] for s in listed}  # the spec's samples: stored all the same
    plain = [{"trait": "formality", "text": "Another text of no evaluation item.", "quality": 1.0}]
    answer = check(c.post(f"/v1/models/{handle}/samples", json={"samples": plain}, headers=h), 201)
    assert answer["in_evaluation_set"] == 0


def _metrics(trait: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in trait.items() if k != "excluded_trained"}


def test_an_evaluation_leaves_out_what_the_version_trained_on(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldeval"
    make_model(c, h, handle)
    trained = [("formality", FORMAL[0], 1.0), ("formality", CASUAL[0], 0.0), ("sentiment", POSITIVE[0], 1.0)]
    train_ready(c, h, handle)  # before the set had its samples' texts (a later training leaves them out)
    _add_items(svc, handle, HELD_OUT[:3] + trained + HELD_OUT[3:])
    first = _evaluate(svc, handle, "v1")
    formality, sentiment = first["traits"]["formality"], first["traits"]["sentiment"]
    assert (formality["excluded_trained"], formality["items"]) == (2, 6)
    assert (sentiment["excluded_trained"], sentiment["items"]) == (1, 4)
    assert first["items"] == len(HELD_OUT)  # the items measured
    pr = check(c.get(f"/v1/models/{handle}/versions/v1/pr-curve", headers=h), 200)["traits"]["formality"]
    assert (pr["positive"], pr["negative"]) == (3, 3)  # thresholds are chosen on held-out items only

    # Its metrics are those of the same version on the rest of the set alone.
    check(c.delete(f"/v1/models/{handle}/evaluation-set", headers=h), 200)
    _add_items(svc, handle, HELD_OUT)
    rest = _evaluate(svc, handle, "v1")
    assert rest["items"] == first["items"]
    for key in ("formality", "sentiment"):
        assert rest["traits"][key]["excluded_trained"] == 0
        assert _metrics(rest["traits"][key]) == _metrics(first["traits"][key]), key

    # The samples change after training (a reopened draft drops the overlap): v1 still trained on them.
    check(c.post(f"/v1/models/{handle}/reopen", headers=h), 200)
    samples = check(c.get(f"/v1/models/{handle}/samples?limit=500", headers=h), 200)["items"]
    for s in samples:
        if s["text"] in {x for _, x, _ in trained}:
            check(c.delete(f"/v1/models/{handle}/samples/{s['id']}", headers=h), 200)
    train_ready(c, h, handle)
    _add_items(svc, handle, trained)
    again = _evaluate(svc, handle, "v1")
    assert {k: t["excluded_trained"] for k, t in again["traits"].items()} == {"formality": 2, "sentiment": 1}
    second = _evaluate(svc, handle, "v2")
    assert {k: t["excluded_trained"] for k, t in second["traits"].items()} == {"formality": 0, "sentiment": 0}
    assert second["items"] == len(HELD_OUT) + len(trained)

    # Compared, the pairs are the items neither version trained on; each side's count comes along.
    cmp = check(c.get(f"/v1/models/{handle}/evaluation/compare?a=v1&b=v2", headers=h), 200)
    assert cmp["items"] == len(HELD_OUT)
    got = {k: (t["excluded_trained_a"], t["excluded_trained_b"]) for k, t in cmp["traits"].items()}
    assert got == {"formality": (2, 0), "sentiment": (1, 0)}

    # A version with no record of what it trained on (trained before the record was kept): nothing is left
    # out, and the evaluation says it cannot tell.
    with svc.ctx.engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE versions SET trained_keys = NULL WHERE version_no = 1 "
                "AND model_id = (SELECT id FROM models WHERE handle = :h)"
            ),
            {"h": handle},
        )
    unknown = _evaluate(svc, handle, "v1")
    assert {k: t["excluded_trained"] for k, t in unknown["traits"].items()} == {
        "formality": None,
        "sentiment": None,
    }
    assert unknown["items"] == len(HELD_OUT) + len(trained)


def test_a_trait_trained_on_every_evaluation_text_is_reported_not_measured(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldall"
    make_model(c, h, handle)
    train_ready(c, h, handle)
    _add_items(svc, handle, [("formality", FORMAL[1], 1.0), ("formality", CASUAL[1], 0.0), *HELD_OUT[6:]])
    result = _evaluate(svc, handle, "v1")
    formality = result["traits"]["formality"]
    assert (formality["items"], formality["excluded_trained"]) == (0, 2)
    assert result["traits"]["sentiment"]["excluded_trained"] == 0
    assert result["items"] == len(HELD_OUT[6:])


def test_zero_data_retention_keeps_no_record_of_the_training_texts(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldzdr"
    make_model(c, h, handle)
    train_ready(c, h, handle)
    query = text(
        "SELECT count(*) FROM versions JOIN models ON models.id = versions.model_id "
        "WHERE models.handle = :h AND versions.trained_keys IS NOT NULL"
    )
    with svc.ctx.engine.connect() as conn:
        assert conn.execute(query, {"h": handle}).scalar() == 1
    check(c.patch(f"/v1/models/{handle}", json={"zero_data_retention": True}, headers=h), 200)
    with svc.ctx.engine.connect() as conn:
        assert conn.execute(query, {"h": handle}).scalar() == 0  # purged with the texts


def _queue(svc: Svc, handle: str) -> dict[str, int]:
    """{text: pool id} of the caller's claimed queue for formality, as the Label page fetches it."""
    body = {"trait": "formality", "k": 100, "claim": True}
    got = check(svc.client.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=svc.author), 200)
    return {item["text"]: item["id"] for item in got["items"]}


def _votes(svc: Svc, handle: str) -> list[dict[str, Any]]:
    url = f"/v1/models/{handle}/votes?limit=500"
    items: list[dict[str, Any]] = check(svc.client.get(url, headers=svc.author), 200)["items"]
    return items


def test_a_pool_imported_before_the_evaluation_set_is_never_labelled_from_it(svc: Svc) -> None:
    """The newcomer's order: a trained model, its pool, a queue fetched, then the same texts as the
    evaluation set. The import says what it overlaps; the list, the queue and both labelling routes leave
    them out; the label asked from the old queue is refused and nothing stored before is lost."""
    c, h = svc.client, svc.author
    handle = "acme.heldpoolfirst"
    make_model(c, h, handle)
    train_ready(c, h, handle)
    check(c.post(f"/v1/models/{handle}/pool", json={"texts": UNLABELLED + EVAL_TEXTS}, headers=h), 201)
    queue = _queue(svc, handle)  # fetched before the set had them: it holds the evaluation texts
    assert set(EVAL_TEXTS) <= set(queue)
    # A label given before the set had its text: buffered, and kept (as a vote) after.
    early = {"trait": "formality", "quality": 1.0}
    check(c.post(f"/v1/models/{handle}/pool/{queue[EVAL_TEXTS[2]]}/label", json=early, headers=h), 201)
    items = [("formality", EVAL_TEXTS[0], 1.0), ("sentiment", EVAL_TEXTS[1], 0.0)]
    items += [("formality", EVAL_TEXTS[2], 1.0), ("formality", FORMAL[0], 1.0)]  # FORMAL[0]: a sample
    body = {"items": [{"trait": t, "text": x, "quality": q} for t, x, q in items]}
    added = check(c.post(f"/v1/models/{handle}/evaluation-set", json=body, headers=h), 201)
    assert (added["in_pool"], added["in_samples"]) == (3, 1)  # said when the overlap appears

    pool = check(c.get(f"/v1/models/{handle}/pool?limit=500", headers=h), 200)
    assert [p["text"] for p in pool["items"]] == UNLABELLED and pool["total"] == len(UNLABELLED)
    assert pool["in_evaluation_set"] == len(EVAL_TEXTS)
    assert not set(EVAL_TEXTS) & set(_queue(svc, handle))  # claimed before: not handed back
    buffered = check(c.get(f"/v1/models/{handle}/feedback", headers=h), 200)["buffered"]
    refused = c.post(f"/v1/models/{handle}/pool/{queue[EVAL_TEXTS[0]]}/label", json=early, headers=h)
    error = check(refused, 409)["error"]
    assert error["code"] == "pool_text_in_evaluation_set" and "not stored" in error["message"]
    bulk = {"trait": "formality", "quality": 0.0, "ids": [queue[EVAL_TEXTS[1]], queue[UNLABELLED[0]]]}
    done = check(c.post(f"/v1/models/{handle}/pool/label", json=bulk, headers=h), 201)
    assert (done["labelled"], done["skipped"]) == ([queue[UNLABELLED[0]]], [queue[EVAL_TEXTS[1]]])
    after = check(c.get(f"/v1/models/{handle}/feedback", headers=h), 200)["buffered"]
    assert after == buffered + 1  # the bulk label of the pool text only
    got = check(c.post(f"/v1/models/{handle}/pool/suggest", json={"trait": "formality"}, headers=h), 200)
    assert got["pool_size"] == len(UNLABELLED) + len(EVAL_TEXTS)  # the texts stay stored
    assert any(v["text"] == EVAL_TEXTS[2] for v in _votes(svc, handle))  # the early label too


def test_labels_of_evaluation_texts_are_never_trained_on_whichever_came_first(svc: Svc) -> None:
    """A sample whose text joins the set later, a sample of a text already in it, and a label buffered
    before its text joined: all kept, none trained on (the version's counts, votes and record say so)."""
    c, h = svc.client, svc.author
    handle = "acme.heldtrain"
    make_model(c, h, handle)
    total = len(_votes(svc, handle))
    _add_items(svc, handle, [("sentiment", EVAL_TEXTS[0], 1.0)])  # the set first, then its text as a sample
    late = [{"trait": "formality", "text": EVAL_TEXTS[0], "quality": 1.0}]
    answer = check(c.post(f"/v1/models/{handle}/samples", json={"samples": late}, headers=h), 201)
    assert answer["in_evaluation_set"] == 1
    _add_items(svc, handle, [("sentiment", FORMAL[0], 1.0)])  # a sample first, then its text in the set
    train_ready(c, h, handle)
    assert check(c.get(f"/v1/models/{handle}/versions/v1", headers=h), 200)["sample_count"] == total - 1
    by_text = {v["text"]: v for v in _votes(svc, handle)}
    assert by_text[EVAL_TEXTS[0]]["version_no"] is None and by_text[FORMAL[0]]["version_no"] is None
    assert by_text[FORMAL[1]]["version_no"] == 1
    result = _evaluate(svc, handle, "v1")  # it trained on neither: both measured
    assert (result["items"], result["traits"]["sentiment"]["excluded_trained"]) == (2, 0)


def test_a_trait_left_with_one_pole_by_the_set_is_refused_before_training(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldpole"
    make_model(c, h, handle)
    _add_items(svc, handle, [("formality", t, 0.0) for t in CASUAL])  # every negative sample's text
    refused = c.post(f"/v1/models/{handle}/train", json={"effort": "low"}, headers=h)
    error = check(refused, 422)["error"]
    assert error["code"] == "trait_one_pole" and "formality" in error["message"]
    assert f"{len(CASUAL)} of them texts of the evaluation set, never trained on" in error["message"]
    model = check(c.get(f"/v1/models/{handle}", headers=h), 200)
    assert model["state"] == "draft"  # nothing queued
