"""Evaluation sets through the real service: import, never trained on, evaluate versions, read results."""

from __future__ import annotations

from typing import Any

from tests.support.service import (
    CASUAL,
    FORMAL,
    Svc,
    check,
    error_code,
    make_model,
    train_ready,
    wait_settled,
)

HELD_OUT = [
    ("formality", "We hereby acknowledge receipt of your correspondence dated the fifth.", 1.0),
    ("formality", "Please be advised that the meeting has been rescheduled to Thursday.", 1.0),
    ("formality", "I should be most obliged if you would forward the invoice.", 1.0),
    ("formality", "sup, u free later or nah", 0.0),
    ("formality", "haha yeah that was dope", 0.0),
    ("formality", "brb grabbing snacks lol", 0.0),
    ("sentiment", "An excellent and joyful experience, highly recommended.", 1.0),
    ("sentiment", "I am delighted with the wonderful result.", 1.0),
    ("sentiment", "A miserable, awful evening that I regret.", 0.0),
    ("sentiment", "Terrible quality and the staff were rude.", 0.0),
]


def _items() -> list[dict[str, Any]]:
    return [{"trait": t, "text": x, "quality": q} for t, x, q in HELD_OUT]


def _evaluate(svc: Svc, handle: str, ref: str) -> dict[str, Any]:
    c, h = svc.client, svc.author
    started = check(c.post(f"/v1/models/{handle}/versions/{ref}/evaluate", headers=h), 202)
    assert started["state"] == "busy" and started["run_id"].startswith("run_")
    model = wait_settled(c, handle, h)
    op = model["last_operation"]
    assert model["state"] == "ready" and op["kind"] == "evaluate" and op["status"] == "succeeded", op
    assert op["run_id"] == started["run_id"] and op["progress"]["fraction"] == 1.0
    result = check(c.get(f"/v1/models/{handle}/versions/{ref}/evaluation", headers=svc.scorer), 200)
    assert result["run_id"] == started["run_id"]
    return result


def test_import_evaluate_and_read(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.evalset"
    make_model(c, h, handle)
    url = f"/v1/models/{handle}/evaluation-set"
    added = check(c.post(url, json={"items": _items()}, headers=h), 201)
    none: dict[str, Any] = {"gold_texts": [], "in_pool": 0, "in_samples": 0}
    assert added == {"added": 10, "total": 10, "duplicates": [], **none}
    again = check(c.post(url, json={"items": _items()[:3]}, headers=h), 201)
    assert again == {"added": 0, "total": 10, "duplicates": [0, 1, 2], **none}  # harmless again
    summary = check(c.get(url, headers=h), 200)
    assert summary["total"] == 10
    assert summary["traits"] == {
        "formality": {"positive": 3, "negative": 3, "neutral": 0},
        "sentiment": {"positive": 2, "negative": 2, "neutral": 0},
    }
    model = train_ready(c, h, handle)
    # Never used for training: the version counts only the samples, and no held-out text became one.
    version = check(c.get(f"/v1/models/{handle}/versions/v1", headers=h), 200)
    assert version["sample_count"] == model["sample_count"] == 2 * (len(FORMAL) + len(CASUAL))
    samples = check(c.get(f"/v1/models/{handle}/samples", headers=h), 200)["items"]
    assert not {s["text"] for s in samples} & {x for _, x, _ in HELD_OUT}

    missing = c.get(f"/v1/models/{handle}/versions/v1/evaluation", headers=h)
    assert error_code(missing, 404) == "evaluation_not_found"
    result = _evaluate(svc, handle, "v1")
    assert (result["version_no"], result["items"]) == (1, 10)
    formality = result["traits"]["formality"]
    assert (formality["items"], formality["positive"], formality["negative"]) == (6, 3, 3)
    for name in ("roc_auc", "accuracy", "f1", "calibration_error"):
        m = formality[name]
        assert 0.0 <= m["ci_low"] <= m["value"] <= m["ci_high"] <= 1.0, (name, m)
    assert sum(b["count"] for b in formality["reliability"]) == 6

    # A second version, evaluated through its tag: the same items, its own stored result.
    train_ready(c, h, handle, reoptimize_params=True)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)
    second = _evaluate(svc, handle, "prod")
    assert second["version_no"] == 2 and second["items"] == 10
    first = check(c.get(f"/v1/models/{handle}/versions/v1/evaluation", headers=h), 200)
    assert first["run_id"] == result["run_id"]

    assert check(c.delete(url, headers=h), 200) == {"handle": handle, "deleted": 10}
    refused = c.post(f"/v1/models/{handle}/versions/v1/evaluate", headers=h)
    assert error_code(refused, 422) == "no_evaluation_set"


def test_evaluation_auth_and_bad_input(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.evalauth"
    make_model(c, h, handle)
    url = f"/v1/models/{handle}/evaluation-set"
    body = {"items": _items()}
    assert error_code(c.post(url, json=body), 401) == "unauthorized"
    assert error_code(c.post(url, json=body, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.post(url, json=body, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.get(url, headers=svc.scorer), 403) == "forbidden"  # items are authoring data
    assert error_code(c.delete(url, headers=svc.scorer), 403) == "forbidden"
    bad = {"items": [*_items(), {"trait": "nope", "text": "x", "quality": 1.0}]}
    assert error_code(c.post(url, json=bad, headers=h), 422) == "unknown_trait"
    out_of_range = {"items": [{"trait": "formality", "text": "x", "quality": 2}]}
    assert error_code(c.post(url, json=out_of_range, headers=h), 422) == "validation_error"
    assert check(c.get(url, headers=h), 200)["total"] == 0  # the refused requests stored nothing
    check(c.post(url, json=body, headers=h), 201)
    train_ready(c, h, handle)
    evaluate = f"/v1/models/{handle}/versions/v1/evaluate"
    assert error_code(c.post(evaluate), 401) == "unauthorized"
    assert error_code(c.post(evaluate, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.post(evaluate, headers=svc.other), 404) == "model_not_found"
    unknown = c.post(f"/v1/models/{handle}/versions/v7/evaluate", headers=h)
    assert error_code(unknown, 404) == "version_not_found"
    result_url = f"/v1/models/{handle}/versions/v1/evaluation"
    assert error_code(c.get(result_url, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.get(result_url), 401) == "unauthorized"
    # Zero-data-retention keeps no labelled text: turning it on purges the items, new ones are refused.
    check(c.patch(f"/v1/models/{handle}", json={"zero_data_retention": True}, headers=h), 200)
    assert check(c.get(url, headers=h), 200)["total"] == 0
    assert error_code(c.post(url, json=body, headers=h), 409) == "zero_data_retention"
