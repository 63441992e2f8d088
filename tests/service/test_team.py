"""Labels from a team: named keys, annotators on every label, votes counted once per text in
training and evaluation, the agreement route, overlap suggestions, adjudication, the human ceiling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import krippendorff
import numpy as np
import pytest
from sqlalchemy import func, select

from core.contract import pole_of
from core.engine import train
from core.engine.ceiling import human_ceiling
from core.engine.votes import Vote, count_votes
from service.__main__ import main
from service.store.api_keys import create_key
from service.store.db import make_engine, transaction
from service.store.samples import load_samples, load_traits, trait_specs
from service.store.schema import ApiKey, EvalItem, FeedbackLabel, Model, SampleRow
from tests.support.service import CASUAL, FORMAL, Svc, auth, check, error_code, make_model, wait_settled

TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
TEXTS = FORMAL + CASUAL  # 12 texts, the first six formal
# The same texts as an evaluation set must differ from the training samples: an evaluation leaves out what
# its version trained on.
HELD_OUT = [f"Quoted again: {t}" for t in TEXTS]


def named(svc: Svc, name: str, namespaces: tuple[str, ...] = ("acme",)) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, list(namespaces), "authoring", name))


def team(svc: Svc) -> dict[str, dict[str, str]]:
    return {name: named(svc, name) for name in ("alice", "bob", "carol")}


def draft(svc: Svc, handle: str, **fields: Any) -> None:
    c = svc.client
    check(c.post("/v1/models", json={"handle": handle, **fields}, headers=svc.author), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)


# Three annotators on 12 texts: they agree on most, disagree on some (qualities as graded votes).
VOTES: dict[str, list[float]] = {
    "alice": [1.0, 1.0, 0.9, 1.0, 0.8, 1.0, 0.0, 0.1, 0.0, 0.2, 0.0, 0.6],
    "bob": [1.0, 0.7, 1.0, 0.3, 1.0, 0.9, 0.0, 0.0, 0.4, 0.0, 0.1, 0.0],
    "carol": [0.8, 1.0, 1.0, 0.9, 0.2, 1.0, 0.1, 0.0, 0.0, 0.7, 0.0, 0.3],
}


def label_all(svc: Svc, handle: str, keys: dict[str, dict[str, str]]) -> None:
    for name, qualities in VOTES.items():
        body = {
            "samples": [
                {"trait": "formality", "text": t, "quality": q} for t, q in zip(TEXTS, qualities, strict=True)
            ]
        }
        check(svc.client.post(f"/v1/models/{handle}/samples", json=body, headers=keys[name]), 201)


def samples_of(svc: Svc, handle: str) -> list[dict[str, Any]]:
    return check(svc.client.get(f"/v1/models/{handle}/samples?limit=500", headers=svc.author), 200)["items"]


def count_rows(svc: Svc, table: Any) -> int:
    with transaction(svc.ctx.reads) as s:
        return int(s.scalar(select(func.count()).select_from(table)) or 0)


# -- identity ------------------------------------------------------------------------------------------------


def test_keys_create_with_a_name_and_a_name_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'keys.sqlite'}"
    base = ["keys", "create", "--namespace", "acme", "--scope", "authoring", "--database-url", url]
    assert main([*base, "--name", "alice"]) == 0
    out = capsys.readouterr().out
    assert "named alice" in out and out.strip().splitlines()[-1].startswith("sk_")
    assert main([*base, "--name", "alice"]) == 2  # taken: a clear error, nothing stored
    assert "the name 'alice' is taken" in capsys.readouterr().err
    for bad in ("al ice", "-alice", "key-0123456789ab", "x" * 65, "alice\n"):
        assert main([*base, f"--name={bad}"]) == 2
        assert "invalid name" in capsys.readouterr().err
    assert main([*base, "--name", "bob", "--role", "annotator"]) == 0
    assert "named bob (annotator)" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # argparse: an unknown role, nothing stored
        main([*base, "--name", "carol", "--role", "admin"])
    assert "invalid choice: 'admin'" in capsys.readouterr().err
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = [(name, role) for name, role in conn.execute(select(ApiKey.name, ApiKey.role))]
        assert rows == [("alice", "owner"), ("bob", "annotator")]
    engine.dispose()


def test_current_key_says_who_labels(svc: Svc) -> None:
    alice = named(svc, "alice")
    assert check(svc.client.get("/v1/keys/current", headers=alice), 200)["name"] == "alice"
    unnamed = check(svc.client.get("/v1/keys/current", headers=svc.author), 200)
    assert unnamed["name"] == f"key-{unnamed['prefix']}"


# -- annotators on labels ------------------------------------------------------------------------------------


def test_every_sample_records_its_annotator_and_duplicates_are_per_annotator(svc: Svc) -> None:
    c, h = svc.client, "acme.votes"
    keys = team(svc)
    draft(svc, h)
    one = {"trait": "formality", "text": "Dear Sir, regards.", "quality": 1.0}
    ids_a = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=keys["alice"]), 201)[
        "ids"
    ]
    again = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=keys["alice"]), 201)[
        "ids"
    ]
    assert again == ids_a  # the same annotator's same label: stored once, as before annotators
    ids_b = check(c.post(f"/v1/models/{h}/samples", json={"samples": [one]}, headers=keys["bob"]), 201)["ids"]
    assert ids_b != ids_a  # another annotator's label of the same text is a vote of its own
    rater = {**one, "annotator": "TurkId-A17"}  # an external rater's vote, posted by bob's import
    ids_r = check(c.post(f"/v1/models/{h}/samples", json={"samples": [rater]}, headers=keys["bob"]), 201)[
        "ids"
    ]
    rows = {r["id"]: r for r in samples_of(svc, h)}
    assert [rows[i]["annotator"] for i in (*ids_a, *ids_b, *ids_r)] == ["alice", "bob", "TurkId-A17"]
    assert not any(r["adjudicated"] for r in rows.values())
    # An edit leaves the vote its rater's (the audit log says who changed it: test_audit_log.py).
    edited = check(
        c.patch(f"/v1/models/{h}/samples/{ids_r[0]}", json={"quality": 0.2}, headers=keys["carol"]), 200
    )
    assert edited["annotator"] == "TurkId-A17" and edited["quality"] == 0.2


def test_posting_as_a_colleague_is_refused_and_stores_nothing(svc: Svc) -> None:
    c, h = svc.client, "acme.reserved"
    keys = team(svc)
    draft(svc, h)
    bob_prefix = check(c.get("/v1/keys/current", headers=svc.author), 200)["prefix"]
    before = count_rows(svc, SampleRow)
    for annotator in ("bob", f"key-{bob_prefix}", "key-anything"):
        body = {
            "samples": [
                {"trait": "formality", "text": "Fine.", "quality": 1.0},
                {"trait": "formality", "text": "Yo.", "quality": 0.0, "annotator": annotator},
            ]
        }
        resp = c.post(f"/v1/models/{h}/samples", json=body, headers=keys["alice"])
        assert error_code(resp, 422) == "annotator_reserved"
        assert resp.json()["error"]["details"][0]["loc"] == ["body", "samples", 1, "annotator"]
        items = {"items": [{"trait": "formality", "text": "Yo.", "quality": 0.0, "annotator": annotator}]}
        resp = c.post(f"/v1/models/{h}/evaluation-set", json=items, headers=keys["alice"])
        assert error_code(resp, 422) == "annotator_reserved"
    for bad in ("", " bob", "bob\n", "b" * 65, "bob!", 7):
        body = {"samples": [{"trait": "formality", "text": "Yo.", "quality": 0.0, "annotator": bad}]}
        assert error_code(c.post(f"/v1/models/{h}/samples", json=body, headers=keys["alice"]), 422) in (
            "validation_error",
            "invalid_annotator",
        )
    # A vote for a trait the model lacks, a quality outside 0-1: the envelope, nothing stored half.
    for sample in (
        {"trait": "tone", "text": "Yo.", "quality": 0.0},
        {"trait": "formality", "text": "Yo.", "quality": 1.5},
        {"trait": "formality", "text": "Yo.", "quality": 0.5, "adjudicated": "yes"},
    ):
        body = {"samples": [{"trait": "formality", "text": "Fine.", "quality": 1.0}, sample]}
        assert error_code(c.post(f"/v1/models/{h}/samples", json=body, headers=keys["alice"]), 422)
    assert count_rows(svc, SampleRow) == before
    own = {"samples": [{"trait": "formality", "text": "Yo.", "quality": 0.0, "annotator": "alice"}]}
    check(c.post(f"/v1/models/{h}/samples", json=own, headers=keys["alice"]), 201)  # one's own name is fine


def test_feedback_and_evaluation_items_carry_the_annotator(svc: Svc) -> None:
    c, h = svc.client, "acme.fb"
    alice = named(svc, "alice", ("acme", "lab"))
    make_model(c, alice, h)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=alice), 202)
    wait_settled(c, h, alice)
    body = {"content": "Dear Sir, kind regards.", "feedback": [{"trait": "formality", "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/score", json=body, headers=alice), 200)
    with transaction(svc.ctx.reads) as s:
        assert s.scalars(select(FeedbackLabel.annotator)).all() == ["alice"]
    items = {"items": [{"trait": "formality", "text": "Regards.", "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/evaluation-set", json=items, headers=alice), 201)
    with transaction(svc.ctx.reads) as s:
        assert s.scalars(select(EvalItem.annotator)).all() == ["alice"]


# -- training: one row per text ------------------------------------------------------------------------------


def test_training_uses_one_row_per_text_with_the_mean_of_its_votes(svc: Svc) -> None:
    c = svc.client
    keys = team(svc)
    draft(svc, "acme.team")
    label_all(svc, "acme.team", keys)
    # The same texts, each once, with the mean of the three votes: training must see exactly this.
    draft(svc, "acme.means")
    means = np.mean([VOTES[n] for n in ("alice", "bob", "carol")], axis=0)
    body = {
        "samples": [
            {"trait": "formality", "text": t, "quality": float(q)} for t, q in zip(TEXTS, means, strict=True)
        ]
    }
    check(c.post("/v1/models/acme.means/samples", json=body, headers=svc.author), 201)
    for h in ("acme.team", "acme.means"):
        check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
        assert wait_settled(c, h, svc.author)["state"] == "ready"
    team_v = check(c.get("/v1/models/acme.team/versions/v1", headers=svc.author), 200)
    means_v = check(c.get("/v1/models/acme.means/versions/v1", headers=svc.author), 200)
    assert team_v["metrics"]["traits"]["formality"]["texts"] == 12
    assert team_v["metrics"]["traits"]["formality"]["votes"] == 36
    assert means_v["metrics"]["traits"]["formality"]["votes"] == 12
    assert team_v["sample_count"] == 36  # the labels stored
    assert team_v["param_hash"] == means_v["param_hash"]
    team_trait = team_v["snapshot"]["traits"][0]
    means_trait = means_v["snapshot"]["traits"][0]
    for field in ("w", "m_dot_w", "k"):
        assert np.allclose(team_trait[field], means_trait[field], rtol=1e-9, atol=1e-12), field


def test_an_adjudicated_vote_decides_the_pole_in_training_and_the_votes_stay(svc: Svc) -> None:
    c, h = svc.client, "acme.settle"
    keys = team(svc)
    draft(svc, h)
    label_all(svc, h, keys)
    contested = TEXTS[4]  # alice 0.8, bob 1.0, carol 0.2
    settle = {"samples": [{"trait": "formality", "text": contested, "quality": 0.0, "adjudicated": True}]}
    sid = check(c.post(f"/v1/models/{h}/samples", json=settle, headers=svc.author), 201)["ids"][0]
    rows = samples_of(svc, h)
    assert len(rows) == 37 and {r["id"]: r for r in rows}[sid]["adjudicated"] is True
    agreement = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)["traits"]["formality"]
    settled = [d for d in agreement["disagreed"] if d["text"] == contested][0]
    assert settled["adjudicated"] is True and settled["contested"] is False and settled["quality"] == 0.0
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    assert wait_settled(c, h, svc.author)["state"] == "ready"
    # On a ready model settling is a sample edit like any other: 409, nothing stored.
    resp = c.post(f"/v1/models/{h}/samples", json=settle, headers=svc.author)
    assert error_code(resp, 409) == "model_not_draft"
    assert len(samples_of(svc, h)) == 37


# -- agreement -----------------------------------------------------------------------------------------------


def package_alpha(level: Literal["interval", "nominal"], matrix: np.ndarray) -> float:
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def test_agreement_equals_the_krippendorff_package_on_the_same_votes(svc: Svc) -> None:
    c, h = svc.client, "acme.agree"
    keys = team(svc)
    draft(svc, h)
    label_all(svc, h, keys)
    # alice changes her mind on one text: her latest vote counts
    change = {"samples": [{"trait": "formality", "text": TEXTS[11], "quality": 0.0}]}
    check(c.post(f"/v1/models/{h}/samples", json=change, headers=keys["alice"]), 201)
    VOTES_NOW = {**VOTES, "alice": [*VOTES["alice"][:11], 0.0]}
    body = check(c.get(f"/v1/models/{h}/agreement", headers=keys["bob"]), 200)
    assert body["handle"] == h and body["stored_at"] is None
    got = body["traits"]["formality"]
    matrix = np.array([VOTES_NOW[n] for n in ("alice", "bob", "carol")])
    assert got["krippendorff_alpha_interval"] == pytest.approx(package_alpha("interval", matrix), abs=1e-6)
    poles = np.sign(matrix - 0.5)  # positive, negative, neutral: three categories
    assert got["krippendorff_alpha_nominal"] == pytest.approx(package_alpha("nominal", poles), abs=1e-6)
    assert got["texts_with_votes"] == 12
    assert got["annotators"] == [{"annotator": n, "votes": 12} for n in ("alice", "bob", "carol")]
    for pair in got["pairwise"]:
        a, b = np.array(VOTES_NOW[pair["a"]]), np.array(VOTES_NOW[pair["b"]])
        same = int((np.sign(a - 0.5) == np.sign(b - 0.5)).sum())
        assert (pair["texts"], pair["same_pole"]) == (12, same)
        assert pair["agreement"] == pytest.approx(same / 12, abs=1e-6)
    assert [(p["a"], p["b"]) for p in got["pairwise"]] == [
        ("alice", "bob"),
        ("alice", "carol"),
        ("bob", "carol"),
    ]
    top = got["disagreed"][0]
    assert {v["annotator"] for v in top["votes"]} == {"alice", "bob", "carol"}
    assert all(isinstance(v["sample_id"], int) for v in top["votes"])
    spreads = [np.std([v["quality"] for v in d["votes"]]) for d in got["disagreed"]]
    assert spreads == sorted(spreads, reverse=True)
    assert len(got["disagreed"]) <= 20
    one = check(c.get(f"/v1/models/{h}/agreement?trait=Formality&limit=2", headers=svc.author), 200)
    assert list(one["traits"]) == ["formality"] and len(one["traits"]["formality"]["disagreed"]) == 2


def test_agreement_bad_requests(svc: Svc) -> None:
    c, h = svc.client, "acme.agree-bad"
    draft(svc, h)
    empty = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)["traits"]["formality"]
    assert empty["texts_with_votes"] == 0 and empty["krippendorff_alpha_interval"] is None
    resp = c.get(f"/v1/models/{h}/agreement?trait=tone", headers=svc.author)
    assert error_code(resp, 422) == "unknown_trait"
    for query in ("limit=0", "limit=101", "limit=x", "limt=5", "trait=" + "t" * 101):
        assert error_code(c.get(f"/v1/models/{h}/agreement?{query}", headers=svc.author), 422)
    assert error_code(c.get(f"/v1/models/{h}/agreement", headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.get(f"/v1/models/{h}/agreement", headers=svc.other), 404) == "model_not_found"


def test_zero_data_retention_keeps_the_agreement_as_numbers(svc: Svc) -> None:
    c, h = svc.client, "acme.zdr-team"
    keys = team(svc)
    draft(svc, h, zero_data_retention=True)
    label_all(svc, h, keys)
    live = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    assert wait_settled(c, h, svc.author)["state"] == "ready"
    assert samples_of(svc, h) == []  # the votes went with the samples
    kept = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)
    assert kept["stored_at"] is not None
    trait = kept["traits"]["formality"]
    assert trait["disagreed"] == []
    want = {k: v for k, v in live["traits"]["formality"].items() if k != "disagreed"}
    assert {k: v for k, v in trait.items() if k != "disagreed"} == want
    assert TEXTS[0] not in str(kept)


# -- overlap -------------------------------------------------------------------------------------------------


def _pool_alice_began(svc: Svc, h: str, keys: dict[str, dict[str, str]]) -> list[str]:
    """A pool of 40 texts, the first 6 of them labelled by alice (alternating poles): those 6."""
    pool = [f"Pool text number {i} about {w}." for i, w in enumerate(["tea", "rain", "maps", "jazz"] * 10)]
    check(svc.client.post(f"/v1/models/{h}/pool", json={"texts": pool}, headers=svc.author), 201)
    done = pool[:6]
    body = {
        "samples": [{"trait": "formality", "text": t, "quality": float(i % 2)} for i, t in enumerate(done)]
    }
    check(svc.client.post(f"/v1/models/{h}/samples", json=body, headers=keys["alice"]), 201)
    return done


def test_overlap_routes_a_share_of_suggestions_to_texts_a_colleague_labelled(svc: Svc) -> None:
    c, h = svc.client, "acme.overlap"
    keys = team(svc)
    draft(svc, h)
    alice_done = _pool_alice_began(svc, h, keys)
    url = f"/v1/models/{h}/pool/suggest"
    plain = check(c.post(url, json={"trait": "formality", "k": 10}, headers=keys["bob"]), 200)
    zero = check(c.post(url, json={"trait": "formality", "k": 10, "overlap": 0}, headers=keys["bob"]), 200)
    assert zero == plain and not any(i["overlap"] for i in plain["items"])  # overlap 0: today's answer
    mixed = check(c.post(url, json={"trait": "formality", "k": 10, "overlap": 0.3}, headers=keys["bob"]), 200)
    shared = [i for i in mixed["items"] if i["overlap"]]
    assert len(mixed["items"]) == 10 and len(shared) == 3
    assert {i["text"] for i in shared} <= set(alice_done)
    assert not {i["text"] for i in mixed["items"] if not i["overlap"]} & set(alice_done)
    # alice is never routed to her own texts, nor bob to what he labelled.
    mine = check(
        c.post(url, json={"trait": "formality", "k": 10, "overlap": 0.5}, headers=keys["alice"]), 200
    )
    assert not any(i["overlap"] for i in mine["items"]) and not {i["text"] for i in mine["items"]} & set(
        alice_done
    )
    body = {"samples": [{"trait": "formality", "text": t, "quality": 1.0} for t in alice_done[:5]]}
    check(c.post(f"/v1/models/{h}/samples", json=body, headers=keys["bob"]), 201)
    later = check(c.post(url, json={"trait": "formality", "k": 10, "overlap": 0.5}, headers=keys["bob"]), 200)
    assert [i["text"] for i in later["items"] if i["overlap"]] == [alice_done[5]]  # only one left for bob
    for bad in (0.6, -0.1, "0.2", True):
        resp = c.post(url, json={"trait": "formality", "overlap": bad}, headers=keys["bob"])
        assert error_code(resp, 422) == "validation_error"


def test_the_owners_overlap_is_what_a_suggestion_without_one_uses(svc: Svc) -> None:
    c, h = svc.client, "acme.overlap-campaign"
    keys = team(svc)
    draft(svc, h)
    assert check(c.get(f"/v1/models/{h}", headers=svc.author), 200)["overlap"] == 0  # as before the field
    alice_done = _pool_alice_began(svc, h, keys)
    url = f"/v1/models/{h}/pool/suggest"
    plain = check(c.post(url, json={"trait": "formality", "k": 10}, headers=keys["bob"]), 200)
    assert not any(i["overlap"] for i in plain["items"])
    for bad in (0.6, -0.1, "0.2", True):
        resp = c.patch(f"/v1/models/{h}", json={"overlap": bad}, headers=svc.author)
        assert error_code(resp, 422) == "validation_error"
    assert check(c.get(f"/v1/models/{h}", headers=svc.author), 200)["overlap"] == 0  # nothing stored
    assert check(c.patch(f"/v1/models/{h}", json={"overlap": 0.3}, headers=svc.author), 200)["overlap"] == 0.3
    assert (
        check(c.patch(f"/v1/models/{h}", json={"overlap": None}, headers=svc.author), 200)["overlap"] == 0.3
    )
    campaign = check(c.post(url, json={"trait": "formality", "k": 10}, headers=keys["bob"]), 200)
    shared = [i["text"] for i in campaign["items"] if i["overlap"]]
    assert len(shared) == 3 and set(shared) <= set(alice_done)
    own = check(c.post(url, json={"trait": "formality", "k": 10, "overlap": 0}, headers=keys["bob"]), 200)
    assert own == plain  # a request's own overlap still wins


# -- the human ceiling ---------------------------------------------------------------------------------------


def test_evaluation_reports_the_human_ceiling_beside_the_model(svc: Svc) -> None:
    c, h = svc.client, "acme.ceiling"
    keys = team(svc)
    make_model(c, svc.author, h)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    for name, qualities in VOTES.items():
        items = {
            "items": [
                {"trait": "formality", "text": t, "quality": q}
                for t, q in zip(HELD_OUT, qualities, strict=True)
            ]
        }
        added = check(c.post(f"/v1/models/{h}/evaluation-set", json=items, headers=keys[name]), 201)
        assert added["added"] == 12
    check(c.post(f"/v1/models/{h}/versions/v1/evaluate", headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    got = check(c.get(f"/v1/models/{h}/versions/v1/evaluation", headers=svc.scorer), 200)
    trait = got["traits"]["formality"]
    assert got["items"] == 36 and trait["items"] == 12 and trait["votes"] == 36
    ceiling = trait["human_ceiling"]
    assert (ceiling["pairs"], ceiling["texts"], ceiling["annotators"]) == (36, 12, 3)
    assert ceiling["ci_low"] <= ceiling["value"] <= ceiling["ci_high"]
    # The same figures from the engine on the same votes and the version's scores.
    scores = c.post(f"/v1/models/{h}/score", json={"content": HELD_OUT}, headers=svc.author).json()["results"]
    by_text = {t: r["scores"][0]["score"] for t, r in zip(HELD_OUT, scores, strict=True)}
    votes = [
        Vote("formality", t, q, n, i)
        for n, qs in VOTES.items()
        for i, (t, q) in enumerate(zip(HELD_OUT, qs, strict=True))
    ]
    want = human_ceiling(count_votes(sorted(votes, key=lambda v: v.annotator or "")), by_text)
    assert want is not None
    assert ceiling["value"] == pytest.approx(want.human.value, abs=1e-6)
    assert want.model is not None
    assert trait["model_agreement"]["value"] == pytest.approx(want.model.value, abs=1e-4)
    share = trait["share_of_ceiling"]
    assert share["value"] == pytest.approx(trait["model_agreement"]["value"] / ceiling["value"], abs=1e-4)
    # Metrics are per text: the counted quality, as training counts it.
    means = np.mean([VOTES[n] for n in ("alice", "bob", "carol")], axis=0)
    poles = [pole_of(q) for q in means]
    assert (trait["positive"], trait["negative"], trait["neutral"]) == (
        poles.count("positive"),
        poles.count("negative"),
        poles.count("neutral"),
    )
    # The comparison of two versions keeps both versions' figures.
    check(
        c.post(
            f"/v1/models/{h}/train", json={"effort": "low", "reoptimize_params": True}, headers=svc.author
        ),
        202,
    )
    wait_settled(c, h, svc.author)
    check(c.post(f"/v1/models/{h}/versions/v2/evaluate", headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    cmp = check(c.get(f"/v1/models/{h}/evaluation/compare?a=v1&b=v2", headers=svc.author), 200)
    row = cmp["traits"]["formality"]
    assert row["items"] == 12
    assert row["human_ceiling_a"] == ceiling and row["share_of_ceiling_a"] == share
    assert row["share_of_ceiling_b"] is not None


def test_one_vote_per_text_measures_as_before(svc: Svc) -> None:
    c, h = svc.client, "acme.single"
    make_model(c, svc.author, h)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    items = {
        "items": [
            {"trait": "formality", "text": t, "quality": q}
            for t, q in zip(HELD_OUT, VOTES["alice"], strict=True)
        ]
    }
    check(c.post(f"/v1/models/{h}/evaluation-set", json=items, headers=svc.author), 201)
    check(c.post(f"/v1/models/{h}/versions/v1/evaluate", headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    trait = check(c.get(f"/v1/models/{h}/versions/v1/evaluation", headers=svc.author), 200)["traits"][
        "formality"
    ]
    assert trait["items"] == trait["votes"] == 12
    assert (
        trait["human_ceiling"] is None
        and trait["model_agreement"] is None
        and trait["share_of_ceiling"] is None
    )


def test_one_vote_per_text_trains_to_the_same_snapshot_as_before_votes(svc: Svc) -> None:
    """With one vote per text the counting rule is the identity: the engine gets the rows it got before
    (each sample, in id order) and writes the very same snapshot."""
    c, h = svc.client, "acme.same-bytes"
    make_model(c, svc.author, h)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    assert wait_settled(c, h, svc.author)["state"] == "ready"
    version = check(c.get(f"/v1/models/{h}/versions/v1", headers=svc.author), 200)
    with transaction(svc.ctx.reads) as s:
        model = s.scalar(select(Model).where(Model.handle == h))
        assert model is not None
        traits = trait_specs(load_traits(s, model.id))
        before_votes = load_samples(s, model.id)  # what training read before votes: every row, by id
    embedder = svc.ctx.embedders.get(model.embedder)
    direct = train(traits, before_votes, embedder=embedder, effort="low")
    assert json.dumps(direct.snapshot, sort_keys=True) == json.dumps(version["snapshot"], sort_keys=True)


def test_turning_zero_data_retention_on_keeps_the_agreement_too(svc: Svc) -> None:
    c, h = svc.client, "acme.zdr-patch"
    keys = team(svc)
    draft(svc, h)
    label_all(svc, h, keys)
    live = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)["traits"]["formality"]
    check(c.patch(f"/v1/models/{h}", json={"zero_data_retention": True}, headers=svc.author), 200)
    kept = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)
    assert kept["stored_at"] is not None and kept["traits"]["formality"]["disagreed"] == []
    assert kept["traits"]["formality"]["krippendorff_alpha_interval"] == live["krippendorff_alpha_interval"]
    # New votes after the purge are measured anew, not mixed with the kept numbers.
    body = {"samples": [{"trait": "formality", "text": TEXTS[0], "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/samples", json=body, headers=keys["alice"]), 201)
    fresh = check(c.get(f"/v1/models/{h}/agreement", headers=svc.author), 200)
    assert fresh["stored_at"] is None and fresh["traits"]["formality"]["texts_with_votes"] == 0


def test_retraining_turns_each_annotators_feedback_into_their_samples(svc: Svc) -> None:
    c, h = svc.client, "acme.fb-votes"
    alice, bob = named(svc, "alice", ("acme",)), named(svc, "bob", ("acme",))
    make_model(c, svc.author, h, auto_retrain=True)  # the owner's choice: a team's model has it off
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    text = "Dear Sir, I remain at your disposal."
    for key, quality in ((alice, 1.0), (bob, 0.0), (alice, 1.0)):  # the buffer (3) fills: a retraining
        body = {"content": text, "feedback": [{"trait": "formality", "quality": quality}]}
        check(c.post(f"/v1/models/{h}/score", json=body, headers=key), 200)
    assert wait_settled(c, h, svc.author)["version_no"] == 2
    rows = [r for r in samples_of(svc, h) if r["provenance"] == "feedback"]
    # Each buffered label becomes a sample under its own id (alice's repeat too); her latest one counts.
    assert sorted((r["annotator"], r["quality"]) for r in rows) == [
        ("alice", 1.0),
        ("alice", 1.0),
        ("bob", 0.0),
    ]
    v2 = check(c.get(f"/v1/models/{h}/versions/v2", headers=svc.author), 200)["metrics"]["traits"][
        "formality"
    ]
    assert v2["texts"] == 13 and v2["votes"] == 14  # the 12 samples, and one text with two votes


def test_overlap_must_be_a_number_in_range(svc: Svc) -> None:
    c, h = svc.client, "acme.overlap-bad"
    draft(svc, h)
    url = f"/v1/models/{h}/pool/suggest"
    resp = c.post(
        url,
        content=b'{"trait": "formality", "overlap": NaN}',
        headers={**svc.author, "Content-Type": "application/json"},
    )
    assert error_code(resp, 422) == "validation_error"
