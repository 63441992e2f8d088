"""Zero-shot traits through the API: train without samples, score, mix with trained traits, and the
rules that still refuse a half-labelled trait or one whose samples zero-data-retention purged."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from service.store.schema import FeedbackLabel
from tests.support.service import FORMAL, Svc, check, error_code, make_model, train_ready, wait_settled

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

MOOD = {
    "name": "Mood",
    "positive_label": "happy, wonderful",
    "negative_label": "sad, awful",
    "description": "How the writer feels about their day.",
}


def _score(svc: Svc, handle: str, text: str, trait: str = "mood") -> float:
    resp = svc.client.post(f"/v1/models/{handle}/score", json={"content": text}, headers=svc.scorer)
    body = check(resp, 200)
    return next(s["score"] for s in body["scores"] if s["trait"] == trait)


def test_a_model_without_samples_trains_zero_shot_and_scores(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.zs", with_data=False)
    check(c.post("/v1/models/acme.zs/traits", json={"traits": [MOOD]}, headers=h), 201)
    model = train_ready(c, h, "acme.zs")
    assert model["version_no"] == 1
    v1 = check(c.get("/v1/models/acme.zs/versions/v1", headers=h), 200)
    mood = v1["metrics"]["traits"]["mood"]
    assert mood["method"] == "zero_shot" and mood["params"] == {"method": "zero_shot"}
    assert mood["positive_samples"] == 0 and mood["roc_auc"] is None and v1["sample_count"] == 0
    traits = check(c.get("/v1/models/acme.zs/traits", headers=h), 200)["traits"]
    assert [t["method"] for t in traits] == ["zero_shot"]

    happy = _score(svc, "acme.zs", "What a wonderful, happy day I had!")
    sad = _score(svc, "acme.zs", "An awful, sad day, I feel terrible.")
    assert 0.0 < sad < 0.5 < happy < 1.0
    # The scoring key sees the same version without its snapshot; the score route needs nothing else.
    assert "snapshot" not in check(c.get("/v1/models/acme.zs/versions/v1", headers=svc.scorer), 200)


def test_zero_shot_and_trained_traits_side_by_side(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.mix")  # formality and sentiment with samples
    check(c.post("/v1/models/acme.mix/traits", json={"traits": [MOOD]}, headers=h), 201)
    train_ready(c, h, "acme.mix")
    metrics = check(c.get("/v1/models/acme.mix/versions/v1", headers=h), 200)["metrics"]["traits"]
    assert {k: m["method"] for k, m in metrics.items()} == {
        "formality": "prior",
        "sentiment": "prior",
        "mood": "zero_shot",
    }
    assert metrics["formality"]["params"]["prior_strength"] > 0
    traits = check(c.get("/v1/models/acme.mix/traits", headers=h), 200)["traits"]
    assert {t["key"]: t["method"] for t in traits}["mood"] == "zero_shot"
    assert 0.0 < _score(svc, "acme.mix", FORMAL[0], "formality") <= 1.0


def test_half_labelled_trait_is_still_refused(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.half", with_data=False)
    check(c.post("/v1/models/acme.half/traits", json={"traits": [MOOD]}, headers=h), 201)
    one = {"samples": [{"trait": "mood", "text": "yay", "quality": 1}]}
    check(c.post("/v1/models/acme.half/samples", json=one, headers=h), 201)
    resp = c.post("/v1/models/acme.half/train", json={}, headers=h)
    assert error_code(resp, 422) == "trait_one_pole" and "mood" in resp.json()["error"]["message"]
    assert check(c.get("/v1/models/acme.half", headers=h), 200)["state"] == "draft"


def test_zero_data_retention_zero_shot_model_can_be_retuned(svc: Svc) -> None:
    """Nothing was purged from a trait that never had samples, so re-optimizing it stays zero-shot
    (a trait trained from purged samples is refused: test_spec_audit)."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.zzs", with_data=False, zero_data_retention=True)
    check(c.post("/v1/models/acme.zzs/traits", json={"traits": [MOOD]}, headers=h), 201)
    train_ready(c, h, "acme.zzs")
    model = train_ready(c, h, "acme.zzs", reoptimize_params=True)
    assert model["version_no"] == 2
    v2 = check(c.get("/v1/models/acme.zzs/versions/v2", headers=h), 200)
    assert v2["triggered_by"] == "retune" and v2["metrics"]["traits"]["mood"]["method"] == "zero_shot"


def test_feedback_on_one_pole_of_a_zero_shot_trait_waits_for_the_other(svc: Svc) -> None:
    """Retraining uses feedback of a zero-shot trait only once both poles have some (the buffer is 3)."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.zfb", with_data=False)
    check(c.post("/v1/models/acme.zfb/traits", json={"traits": [MOOD]}, headers=h), 201)
    train_ready(c, h, "acme.zfb")

    def feedback(text: str, quality: float) -> None:
        body = {"content": text, "feedback": [{"trait": "mood", "quality": quality}]}
        check(c.post("/v1/models/acme.zfb/score", json=body, headers=h), 200)

    for i in range(3):
        feedback(f"a lovely bright morning number {i}", 1.0)
    model = wait_settled(c, "acme.zfb", h)
    assert model["state"] == "ready" and model["version_no"] == 2
    v2 = check(c.get("/v1/models/acme.zfb/versions/v2", headers=h), 200)
    assert v2["metrics"]["traits"]["mood"]["method"] == "zero_shot" and v2["sample_count"] == 0
    with svc.ctx.sessions() as s:
        assert s.scalar(select(func.count()).select_from(FeedbackLabel)) == 3  # held, not lost

    feedback("a grim grey evening", 0.0)  # the buffer is still full: this retrains at once
    model = wait_settled(c, "acme.zfb", h)
    assert model["version_no"] == 3
    v3 = check(c.get("/v1/models/acme.zfb/versions/v3", headers=h), 200)
    assert v3["metrics"]["traits"]["mood"]["method"] == "prior" and v3["sample_count"] == 4
    with svc.ctx.sessions() as s:
        assert s.scalar(select(func.count()).select_from(FeedbackLabel)) == 0


def test_preview_gives_the_scores_the_trait_will_have_once_trained_zero_shot(svc: Svc) -> None:
    c, h = svc.client, svc.author
    probes = ["What a wonderful, happy day I had!", "An awful, sad day, I feel terrible.", "The bus is late."]
    make_model(c, h, "acme.zpv", with_data=False)  # nothing added yet: the trait is being typed
    preview = check(
        c.post("/v1/models/acme.zpv/traits/preview", json={"trait": MOOD, "texts": probes}, headers=h), 200
    )
    assert preview["embedder"] == "hashing-v1-512"
    assert "Happy, wonderful" in preview["positive_texts"] and "Sad, awful" in preview["negative_texts"]
    assert preview["scores"][1] < 0.5 < preview["scores"][0]
    assert check(c.get("/v1/models/acme.zpv/traits", headers=h), 200)["traits"] == []  # nothing stored

    check(c.post("/v1/models/acme.zpv/traits", json={"traits": [MOOD]}, headers=h), 201)
    train_ready(c, h, "acme.zpv")
    assert [_score(svc, "acme.zpv", t) for t in probes] == preview["scores"]


def test_preview_refuses_what_a_trait_or_a_score_request_would(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.zpv2", with_data=False)
    url = "/v1/models/acme.zpv2/traits/preview"
    blank = {**MOOD, "negative_label": "  "}
    for body in (
        {"trait": MOOD, "texts": []},
        {"trait": MOOD, "texts": ["ok"] * 21},
        {"trait": MOOD, "texts": ["   "]},
        {"trait": blank, "texts": ["ok"]},
        {"trait": MOOD},
    ):
        assert c.post(url, json=body, headers=h).status_code == 422, body
    assert (
        error_code(c.post(url, json={"trait": MOOD, "texts": ["a"]}, headers=svc.scorer), 403) == "forbidden"
    )
