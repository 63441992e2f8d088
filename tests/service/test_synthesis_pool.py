"""Synthesis on the service: real texts from the model's pool (never the evaluation set), else templates
that say what they are."""

from __future__ import annotations

from typing import Any

from tests.support.service import CASUAL, FORMAL, NEGATIVE, POSITIVE, TRAITS, Svc, check, wait_settled

LABELLED = FORMAL[:2] + CASUAL[:2]


def _model(svc: Svc, handle: str, *, pool: list[str]) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS[:1]}, headers=h), 201)
    rows = [{"trait": "formality", "text": t, "quality": 1.0 if t in FORMAL else 0.0} for t in LABELLED]
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows}, headers=h), 201)
    if pool:
        check(c.post(f"/v1/models/{handle}/pool", json={"texts": pool}, headers=h), 201)


def _synthesize(svc: Svc, handle: str) -> tuple[list[dict[str, Any]], str]:
    c, h = svc.client, svc.author
    check(c.post(f"/v1/models/{handle}/samples/synthesize", json={"effort": "low"}, headers=h), 202)
    model = wait_settled(c, handle, h)
    assert model["state"] == "draft" and model["last_operation"]["status"] == "succeeded"
    page = check(c.get(f"/v1/models/{handle}/samples", params={"provenance": "synthesized"}, headers=h), 200)
    return page["items"], model["last_operation"]["progress"]["message"]


def test_from_traits_picks_pool_texts_never_labelled_nor_held_out(svc: Svc) -> None:
    c, h = svc.client, svc.author
    pool = FORMAL + CASUAL + POSITIVE + NEGATIVE
    _model(svc, "acme.synfree", pool=pool)
    first, _ = _synthesize(svc, "acme.synfree")
    # The text picked first, put in the evaluation set of a model with the same pool: never picked there.
    held = first[0]["text"]
    _model(svc, "acme.synpool", pool=pool)
    item = {"trait": "formality", "text": held, "quality": first[0]["quality"]}
    check(c.post("/v1/models/acme.synpool/evaluation-set", json={"items": [item]}, headers=h), 201)
    made, message = _synthesize(svc, "acme.synpool")
    assert made and all(s["source"] == "pool" and s["text"] in pool for s in made)
    assert not {s["text"] for s in first + made} & set(LABELLED)
    assert held not in {s["text"] for s in made}
    assert "pool" in message
    # Other samples carry no source.
    everything = check(c.get("/v1/models/acme.synpool/samples", headers=h), 200)["items"]
    assert all(s["source"] is None for s in everything if s["provenance"] != "synthesized")


def test_without_a_pool_the_answer_says_the_samples_describe_the_poles(svc: Svc) -> None:
    c, h = svc.client, svc.author
    _model(svc, "acme.syntpl", pool=[])
    made, message = _synthesize(svc, "acme.syntpl")
    assert made and all(s["source"] == "template" for s in made)
    assert "descriptions of the poles" in message and "pool" in message
    # Adding a pool, as the answer says, and synthesizing again is a new run, not a repeat.
    check(c.post("/v1/models/acme.syntpl/pool", json={"texts": FORMAL + CASUAL}, headers=h), 201)
    again, message = _synthesize(svc, "acme.syntpl")
    assert {s["source"] for s in again} == {"template", "pool"} and "pool" in message
