"""Per-trait thresholds chosen on the evaluation set, decisions in score responses, and the side-by-side
comparison of two versions' evaluations, through the real service."""

from __future__ import annotations

from typing import Any

from tests.service.test_evaluation import HELD_OUT, _evaluate, _items
from tests.support.service import Svc, check, error_code, make_model, train_ready

SPEC_FIELDS = {"trait", "name", "score", "label", "positive_label", "negative_label"}


def _ready_with_evaluation(svc: Svc, handle: str) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, handle)
    check(c.post(f"/v1/models/{handle}/evaluation-set", json={"items": _items()}, headers=h), 201)
    train_ready(c, h, handle)


def _score(svc: Svc, handle: str, texts: list[str], version: str | None = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"content": texts} | ({"version": version} if version else {})
    out = check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=svc.scorer), 200)
    return [{s["trait"]: s for s in r["scores"]} for r in out["results"]]


def test_threshold_from_pr_curve_gives_decisions_and_stays_with_its_version(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.thresholds"
    _ready_with_evaluation(svc, handle)
    curve_url = f"/v1/models/{handle}/versions/v1/pr-curve"
    assert error_code(c.get(curve_url, headers=h), 404) == "evaluation_not_found"
    _evaluate(svc, handle, "v1")
    curve = check(c.get(curve_url, headers=svc.scorer), 200)  # no text in it: any reader
    formality = curve["traits"]["formality"]
    assert (formality["positive"], formality["negative"]) == (3, 3)
    assert formality["points"][0]["recall"] == 1.0
    assert [p["threshold"] for p in formality["points"]] == sorted(
        p["threshold"] for p in formality["points"]
    )

    put = f"/v1/models/{handle}/versions/v1/thresholds/formality"
    chosen = check(c.put(put, json={"target": "recall", "value": 1.0}, headers=h), 200)
    assert chosen["trait"] == "formality" and chosen["target"] == "recall" and chosen["recall"] == 1.0
    assert chosen["items"] == 6 and chosen["run_id"] == curve["run_id"]
    # The stored threshold is one of the curve's points, with that point's precision.
    assert any(
        abs(p["threshold"] - chosen["threshold"]) < 1e-6 and p["precision"] == chosen["precision"]
        for p in formality["points"]
    )

    # Score the held-out formality texts: decision = score ≥ threshold; recall 1 as promised.
    texts = [x for t, x, _ in HELD_OUT if t == "formality"]
    labels = [q for t, _, q in HELD_OUT if t == "formality"]
    results = _score(svc, handle, texts)
    for r in results:
        f = r["formality"]
        assert f["threshold"] == chosen["threshold"] and f["decision"] is (f["score"] >= f["threshold"])
        assert set(r["sentiment"]) == SPEC_FIELDS  # no threshold for sentiment: the spec's fields only
    decided = [r["formality"]["decision"] for r in results]
    assert all(d for d, q in zip(decided, labels, strict=True) if q == 1.0)
    tp = sum(d and q == 1.0 for d, q in zip(decided, labels, strict=True))
    assert abs(tp / sum(decided) - chosen["precision"]) < 1e-6
    # The single-content shape carries it too; the score itself is unchanged (still the calibrated score).
    one = check(c.post(f"/v1/models/{handle}/score", json={"content": texts[0]}, headers=svc.scorer), 200)
    assert one["scores"][0]["score"] == results[0]["formality"]["score"] and "decision" in one["scores"][0]
    # Every field of both shapes is documented in the served OpenAPI (the additive ones included).
    schemas = check(c.get("/v1/openapi.json"), 200)["components"]["schemas"]
    for shape in (schemas["ScoreOut"], schemas["ScoreResult"]):
        ref = shape["properties"]["scores"]
        ref = next((x for x in ref.get("anyOf", [ref]) if x.get("type") == "array"), ref)["items"]["$ref"]
        documented = schemas[ref.rsplit("/", 1)[1]]["properties"]
        assert set(one["scores"][0]) == set(documented) == SPEC_FIELDS | {"threshold", "decision"}

    listed = check(c.get(f"/v1/models/{handle}/versions/v1/thresholds", headers=svc.scorer), 200)
    assert listed["thresholds"] == {"formality": chosen}

    # It belongs to the version: a tag on v1 carries it after a new version is active and `prod` moves.
    check(c.post(f"/v1/models/{handle}/versions/stable", headers=h), 200)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)
    train_ready(c, h, handle, reoptimize_params=True)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)  # prod moves to v2
    assert "decision" not in _score(svc, handle, texts[:1])[0]["formality"]  # v2: no threshold
    assert "decision" not in _score(svc, handle, texts[:1], "prod")[0]["formality"]
    assert _score(svc, handle, texts[:1], "stable")[0]["formality"]["threshold"] == chosen["threshold"]
    by_tag = check(c.get(f"/v1/models/{handle}/versions/stable/thresholds", headers=h), 200)
    assert by_tag["version_no"] == 1 and by_tag["thresholds"] == {"formality": chosen}

    # A stricter target replaces it; deleting removes it (once).
    strict = check(c.put(put, json={"target": "precision", "value": 1.0}, headers=h), 200)
    assert strict["precision"] == 1.0 and strict["threshold"] >= chosen["threshold"]
    gone = check(c.delete(put, headers=h), 200)
    assert gone == {"handle": handle, "version_no": 1, "trait": "formality", "deleted": True}
    assert check(c.delete(put, headers=h), 200)["deleted"] is False
    assert set(_score(svc, handle, texts[:1], "v1")[0]["formality"]) == SPEC_FIELDS


def test_threshold_bad_input_and_auth(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.thrauth"
    _ready_with_evaluation(svc, handle)
    put = f"/v1/models/{handle}/versions/v1/thresholds/formality"
    body = {"target": "precision", "value": 0.8}
    assert error_code(c.put(put, json=body, headers=h), 404) == "evaluation_not_found"
    _evaluate(svc, handle, "v1")
    assert error_code(c.put(put, json=body), 401) == "unauthorized"
    assert error_code(c.put(put, json=body, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.put(put, json=body, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.delete(put, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.get(f"/v1/models/{handle}/versions/v1/pr-curve"), 401) == "unauthorized"
    assert error_code(c.get(f"/v1/models/{handle}/versions/v1/pr-curve", headers=svc.other), 404) == (
        "model_not_found"
    )
    for bad in ({"target": "f1", "value": 0.8}, {"target": "recall", "value": 1.5}, {"target": "recall"},
                {"target": "recall", "value": "0.8"}):  # fmt: skip
        assert error_code(c.put(put, json=bad, headers=h), 422) == "validation_error", bad
    extra = {"target": "recall", "value": 0.8, "extra": 1}
    assert error_code(c.put(put, json=extra, headers=h), 422) == "unknown_field"
    unknown = f"/v1/models/{handle}/versions/v1/thresholds/nope"
    assert error_code(c.put(unknown, json=body, headers=h), 422) == "trait_not_evaluated"
    missing = f"/v1/models/{handle}/versions/v9/thresholds/formality"
    assert error_code(c.put(missing, json=body, headers=h), 404) == "version_not_found"
    # Nothing refused was stored.
    assert check(c.get(f"/v1/models/{handle}/versions/v1/thresholds", headers=h), 200)["thresholds"] == {}


def test_side_by_side_comparison_of_two_evaluations(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.evalcompare"
    _ready_with_evaluation(svc, handle)
    url = f"/v1/models/{handle}/evaluation/compare"
    _evaluate(svc, handle, "v1")
    assert error_code(c.get(url, params={"a": "v1", "b": "v2"}, headers=h), 404) == "version_not_found"
    train_ready(c, h, handle, reoptimize_params=True, effort="medium")
    assert error_code(c.get(url, params={"a": "v1", "b": "v2"}, headers=h), 404) == "evaluation_not_found"
    _evaluate(svc, handle, "v2")
    out = check(c.get(url, params={"a": "v1", "b": "v2", "limit": 5}, headers=h), 200)
    assert (out["a"]["version_no"], out["b"]["version_no"]) == (1, 2) and out["items"] == len(HELD_OUT)
    first = check(c.get(f"/v1/models/{handle}/versions/v1/evaluation", headers=h), 200)["traits"]
    for key, trait in out["traits"].items():
        # A's side is the stored evaluation of v1 (the same items), B − A is the difference of the two sides.
        assert abs(trait["accuracy"]["a"] - first[key]["accuracy"]["value"]) < 1e-6
        for name in ("roc_auc", "accuracy", "f1", "calibration_error"):
            m = trait[name]
            assert abs(m["difference"] - (m["b"] - m["a"])) < 1e-5
            assert m["ci_low"] <= m["difference"] + 1e-9 and m["difference"] <= m["ci_high"] + 1e-9
            assert 0.0 <= m["p_value"] <= 1.0 and isinstance(m["significant"], bool)
        assert sum(b["count"] for b in trait["reliability_b"]) == trait["items"]
    rows = out["disagreements"]
    assert len(rows) == 5 and [abs(r["difference"]) for r in rows] == sorted(
        (abs(r["difference"]) for r in rows), reverse=True
    )
    labelled = {(t, x): q for t, x, q in HELD_OUT}
    for r in rows:
        assert labelled[(r["trait"], r["text"])] == r["quality"]
        assert abs(r["difference"] - (r["score_b"] - r["score_a"])) < 2e-6
    # A version against itself: no difference anywhere.
    same = check(c.get(url, params={"a": "v2", "b": "v2"}, headers=h), 200)
    assert all(not t[n]["significant"] for t in same["traits"].values() for n in ("accuracy", "f1"))
    assert all(r["difference"] == 0 for r in same["disagreements"])
    # Texts are authoring data: scoring keys are refused; other namespaces do not see a private model.
    assert error_code(c.get(url, params={"a": "v1", "b": "v2"}), 401) == "unauthorized"
    assert error_code(c.get(url, params={"a": "v1", "b": "v2"}, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.get(url, params={"a": "v1", "b": "v2"}, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.get(url, params={"a": "v1"}, headers=h), 422) == "validation_error"


def test_an_evaluation_without_item_scores_asks_for_a_new_one(svc: Svc) -> None:
    """Evaluations stored before per-item scores (an older service) cannot give thresholds: 409, then a new
    evaluation of the version works."""
    from sqlalchemy import select

    from service.store.db import transaction
    from service.store.schema import Evaluation

    c, h = svc.client, svc.author
    handle = "acme.outdated"
    _ready_with_evaluation(svc, handle)
    _evaluate(svc, handle, "v1")
    with transaction(svc.ctx.sessions) as s:
        stored = s.scalars(select(Evaluation)).all()
        for row in stored:
            row.metrics = {"traits": row.metrics["traits"]}  # as an older service stored it
    curve = f"/v1/models/{handle}/versions/v1/pr-curve"
    assert error_code(c.get(curve, headers=h), 409) == "evaluation_outdated"
    put = f"/v1/models/{handle}/versions/v1/thresholds/formality"
    assert (
        error_code(c.put(put, json={"target": "recall", "value": 0.9}, headers=h), 409)
        == "evaluation_outdated"
    )
    _evaluate(svc, handle, "v1")
    assert check(c.get(curve, headers=h), 200)["traits"]["formality"]["points"]
