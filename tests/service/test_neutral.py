"""The neutral middle through the service (docs/api.md, "The neutral middle"): a quality of exactly 0.5 counts
toward neither pole. It used to count as positive: a trait of 10 samples at 1, 10 at 0 and 4 at 0.5 said
`positive_samples` 14, and an evaluation dropped its neutral items without a word."""

from __future__ import annotations

from typing import Any

from tests.support.service import (
    CASUAL,
    FORMAL,
    NEGATIVE,
    POSITIVE,
    Svc,
    check,
    error_code,
    evaluate_version,
    make_model,
    train_ready,
    wait_settled,
)

NEUTRAL = [
    "The parcel arrived on Tuesday.",
    "The meeting is in room four.",
    "It rained for most of the afternoon.",
    "The report has twelve pages.",
]


def _counts(svc: Svc, handle: str, key: str) -> tuple[int, int, int, int]:
    traits = check(svc.client.get(f"/v1/models/{handle}/traits", headers=svc.author), 200)["traits"]
    t = next(t for t in traits if t["key"] == key)
    return t["sample_count"], t["positive_samples"], t["negative_samples"], t["neutral_samples"]


def _sentiment_model(svc: Svc, handle: str, rows: list[tuple[str, float]]) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, handle, with_data=False)
    trait = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": [trait]}, headers=h), 201)
    samples = [{"trait": "sentiment", "text": t, "quality": q} for t, q in rows]
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": samples}, headers=h), 201)


def _ten(texts: list[str]) -> list[str]:
    return [f"{t} ({i})" for i, t in enumerate(texts + texts)][:10]


def test_a_trait_counts_neutral_samples_apart_from_both_poles_through_edits_and_training(svc: Svc) -> None:
    c, h = svc.client, svc.author
    rows = [(t, 1.0) for t in _ten(POSITIVE)] + [(t, 0.0) for t in _ten(NEGATIVE)]
    rows += [(t, 0.5) for t in NEUTRAL]
    _sentiment_model(svc, "acme.neutral", rows)
    assert _counts(svc, "acme.neutral", "sentiment") == (24, 10, 10, 4)

    stored = check(c.get("/v1/models/acme.neutral/samples", headers=h), 200)["items"]
    ids = {s["text"]: s["id"] for s in stored}
    patch = "/v1/models/acme.neutral/samples/{}"
    check(c.patch(patch.format(ids[NEUTRAL[0]]), json={"quality": 1.0}, headers=h), 200)  # neutral -> pole
    assert _counts(svc, "acme.neutral", "sentiment") == (24, 11, 10, 3)
    check(c.patch(patch.format(ids[rows[10][0]]), json={"quality": 0.5}, headers=h), 200)  # pole -> neutral
    assert _counts(svc, "acme.neutral", "sentiment") == (24, 11, 9, 4)
    check(c.delete(patch.format(ids[NEUTRAL[1]]), headers=h), 200)
    assert _counts(svc, "acme.neutral", "sentiment") == (23, 11, 9, 3)

    train_ready(c, h, "acme.neutral")
    metrics = check(c.get("/v1/models/acme.neutral/versions/v1", headers=h), 200)["metrics"]["traits"]
    poles = ("positive_samples", "negative_samples", "neutral_samples")
    assert tuple(metrics["sentiment"][f] for f in poles) == (11, 9, 3)


def test_neutral_samples_do_not_make_a_trait_trainable(svc: Svc) -> None:
    c, h = svc.client, svc.author
    _sentiment_model(svc, "acme.half", [(t, 0.0) for t in _ten(NEGATIVE)] + [(t, 0.5) for t in NEUTRAL])
    assert _counts(svc, "acme.half", "sentiment") == (14, 0, 10, 4)
    refused = c.post("/v1/models/acme.half/train", json={"effort": "low"}, headers=h)
    assert error_code(refused, 422) == "trait_one_pole"
    assert "0 positive, 10 negative and 4 neutral" in refused.json()["error"]["message"]
    assert check(c.get("/v1/models/acme.half", headers=h), 200)["state"] == "draft"  # nothing was queued


def _feedback(svc: Svc, handle: str, text: str, quality: float) -> None:
    body = {"content": text, "feedback": [{"trait": "formality", "quality": quality}]}
    check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=svc.author), 200)


def test_feedback_that_retraining_takes_in_keeps_the_counts(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.fbneutral")
    train_ready(c, h, "acme.fbneutral")
    assert _counts(svc, "acme.fbneutral", "formality") == (12, 6, 6, 0)
    # retrain_buffer is 3 in the test settings: the third label starts the retraining that stores them all.
    _feedback(svc, "acme.fbneutral", "Yours faithfully, the secretary.", 1.0)
    _feedback(svc, "acme.fbneutral", "The minutes are attached.", 0.5)
    _feedback(svc, "acme.fbneutral", "lol nope", 0.0)
    model = wait_settled(c, "acme.fbneutral", h)
    assert model["version_no"] == 2, model["last_operation"]
    assert _counts(svc, "acme.fbneutral", "formality") == (15, 7, 7, 1)
    trained = check(c.get("/v1/models/acme.fbneutral/versions/v2", headers=h), 200)["metrics"]["traits"]
    assert trained["formality"]["neutral_samples"] == 1


def _evaluate(svc: Svc, handle: str, ref: str = "v1") -> dict[str, Any]:
    return evaluate_version(svc.client, svc.author, handle, ref)


def test_an_evaluation_counts_its_neutral_items_and_leaves_them_out_of_the_pole_metrics(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.evalneutral"
    make_model(c, h, handle)
    train_ready(c, h, handle)
    poles = [{"trait": "formality", "text": f"{t} Thanks.", "quality": 1.0} for t in FORMAL + FORMAL[:2]]
    poles += [{"trait": "formality", "text": f"{t} ok", "quality": 0.0} for t in CASUAL + CASUAL[:2]]
    poles = [dict(p, text=f"{p['text']} #{i}") for i, p in enumerate(poles)]  # 8 distinct texts a pole
    neutral = [{"trait": "formality", "text": t, "quality": 0.5} for t in NEUTRAL]
    url = f"/v1/models/{handle}/evaluation-set"
    check(c.post(url, json={"items": poles + neutral}, headers=h), 201)
    summary = check(c.get(url, headers=h), 200)
    assert summary["total"] == 20
    assert summary["traits"] == {"formality": {"positive": 8, "negative": 8, "neutral": 4}}

    with_neutral = _evaluate(svc, handle)["traits"]["formality"]
    assert (with_neutral["items"], with_neutral["positive"], with_neutral["negative"]) == (20, 8, 8)
    assert with_neutral["neutral"] == 4
    assert sum(b["count"] for b in with_neutral["reliability"]) == 20  # calibration keeps every item
    curve = check(c.get(f"/v1/models/{handle}/versions/v1/pr-curve", headers=h), 200)["traits"]["formality"]
    assert (curve["positive"], curve["negative"], curve["neutral"]) == (8, 8, 4)

    # The same set without its neutral items: the pole metrics and the curve are exactly the same.
    check(c.delete(url, headers=h), 200)
    check(c.post(url, json={"items": poles}, headers=h), 201)
    without = _evaluate(svc, handle)["traits"]["formality"]
    assert without["neutral"] == 0
    for metric in ("roc_auc", "accuracy", "f1"):
        assert with_neutral[metric] == without[metric], metric
    assert (
        check(c.get(f"/v1/models/{handle}/versions/v1/pr-curve", headers=h), 200)["traits"]["formality"][
            "points"
        ]
        == curve["points"]
    )
