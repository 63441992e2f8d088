"""Models on multilingual-e5-small (`e5-small`) through the real service: pole labels and samples in Spanish
and Chinese train and score, and the Perspective route checks a request's `languages` against the languages
the answering version's embedder reads (docs/perspective.md). e5 costs ~50 ms a text: few, short texts."""

from __future__ import annotations

from typing import Any

import pytest

from core.embedders import MINILM_ID
from core.embedders.e5 import E5_ID
from tests.support.service import Svc, check, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

ANALYZE = "/v1alpha1/comments:analyze"

# Zero-shot: a trait written in Spanish only (labels and description), no samples.
ANIMO = {
    "name": "Animo",  # ASCII: "Ánimo" would get the key "nimo" (core.contract.trait_key)
    "positive_label": "feliz, contento",
    "negative_label": "triste, enfadado",
    "description": "Un texto feliz expresa alegría y satisfacción. "
    "Un texto triste expresa pena, enfado o decepción.",
}
FELIZ = ["¡Qué día tan maravilloso, estoy muy feliz!", "Me encanta este regalo, gracias de corazón."]
TRISTE = ["Estoy muy triste, todo me ha salido mal hoy.", "Qué decepción, nunca más vuelvo a este sitio."]

# Few-shot: a trait in Chinese (好评 = a good review, 差评 = a bad one) with a few labelled reviews.
REVIEW = {"name": "Review", "positive_label": "好评", "negative_label": "差评"}
GOOD = ["质量很好，物流也快，非常满意", "这本书写得太精彩了，强烈推荐", "酒店干净，服务热情，下次还来"]
BAD = ["质量太差了，用了两天就坏了", "内容空洞，浪费钱，很后悔买了", "房间又脏又吵，服务态度恶劣"]
GOOD_NEW, BAD_NEW = "东西不错，价格实惠，很喜欢", "包装破损，客服也不理人，失望"


def _scores(svc: Svc, handle: str, text: str) -> dict[str, float]:
    resp = svc.client.post(f"/v1/models/{handle}/score", json={"content": text}, headers=svc.scorer)
    return {s["trait"]: s["score"] for s in check(resp, 200)["scores"]}


def _analyze(svc: Svc, handle: str, text: str, attribute: str, languages: list[str] | None) -> Any:
    body: dict[str, Any] = {
        "comment": {"text": text},
        "requestedAttributes": {attribute: {}},
        "model": handle,
    }
    if languages is not None:
        body["languages"] = languages
    return svc.client.post(ANALYZE, json=body, headers=svc.scorer)


@pytest.mark.slow
def test_an_e5_model_reads_spanish_labels_and_chinese_samples(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.multilingual"
    assert make_model(c, h, handle, with_data=False, embedder="e5-small")["embedder"] == E5_ID
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": [ANIMO, REVIEW]}, headers=h), 201)
    samples = [{"trait": "review", "text": t, "quality": 1.0} for t in GOOD]
    samples += [{"trait": "review", "text": t, "quality": 0.0} for t in BAD]
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": samples}, headers=h), 201)
    train_ready(c, h, handle)
    metrics = check(c.get(f"/v1/models/{handle}/versions/v1", headers=h), 200)["metrics"]
    assert metrics["embedder"] == E5_ID
    assert (
        metrics["traits"]["animo"]["method"] == "zero_shot"
        and metrics["traits"]["review"]["method"] == "prior"
    )

    # Zero-shot from the Spanish pole labels alone, and few-shot on reviews the model never saw.
    feliz = [_scores(svc, handle, t)["animo"] for t in FELIZ]
    triste = [_scores(svc, handle, t)["animo"] for t in TRISTE]
    assert min(feliz) > max(triste)
    assert _scores(svc, handle, GOOD_NEW)["review"] > _scores(svc, handle, BAD_NEW)["review"]

    # Perspective: e5 reads the languages the request names; the score is the native one.
    for text, languages in ((FELIZ[0], ["es"]), (GOOD_NEW, ["zh-CN", "es"]), (GOOD_NEW, None)):
        attribute = "ANIMO" if text == FELIZ[0] else "REVIEW"
        body = check(_analyze(svc, handle, text, attribute, languages), 200)
        native = _scores(svc, handle, text)[attribute.lower()]
        assert body["attributeScores"][attribute]["summaryScore"]["value"] == native
        assert body["languages"] == (languages or body["detectedLanguages"])
    assert check(_analyze(svc, handle, FELIZ[0], "ANIMO", None), 200)["detectedLanguages"] == ["es"]


@pytest.mark.slow
def test_an_english_only_embedder_refuses_other_request_languages(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.english"
    assert make_model(c, h, handle, embedder="minilm")["embedder"] == MINILM_ID
    train_ready(c, h, handle)
    german = "Vielen Dank für Ihre ausführliche und freundliche Antwort auf meine Frage."

    refused = _analyze(svc, handle, german, "FORMALITY", ["en", "de", "fr-CA"])
    assert refused.status_code == 400, refused.text
    err = refused.json()["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    assert err["message"] == "Attribute FORMALITY does not support request languages: de, fr-CA"
    assert err["details"][0]["reason"] == "language_not_supported_by_attribute"
    assert err["details"][1] == {
        "@type": "type.googleapis.com/google.commentanalyzer.v1alpha1.Error",
        "errorType": "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE",
        "languageNotSupportedByAttributeError": {
            "detectedLanguages": ["de", "fr-CA"],
            "attribute": "FORMALITY",
        },
    }
    # English by any spelling is read; without `languages` nothing is refused (detection is only reported).
    assert check(_analyze(svc, handle, german, "FORMALITY", ["EN-us"]), 200)["languages"] == ["EN-us"]
    answered = check(_analyze(svc, handle, german, "FORMALITY", None), 200)
    assert answered["detectedLanguages"] == ["de"] and "FORMALITY" in answered["attributeScores"]


def test_the_hashing_embedder_reads_any_request_language(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.lexical")  # the service's default here: hashing
    train_ready(c, h, "acme.lexical")
    body = check(_analyze(svc, "acme.lexical", "ありがとうございます", "FORMALITY", ["ja", "xx"]), 200)
    assert body["languages"] == ["ja", "xx"] and "FORMALITY" in body["attributeScores"]
