"""The text length rule (docs/api.md: 1-20,000 characters as sent, not blank) is one rule with one answer.

Every endpoint that takes a text refuses a long one as `text_too_long` naming the 20,000 limit, whatever the
length (a looser bound once answered first, with pydantic's words and its own number), and its OpenAPI schema
states the same limit: a text padded past 20,000 characters is refused too, as the schema says.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.service import Svc, check, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

LONG_TEXTS = ("x" * 20_001, "y" * 35_000)


def _refusal(resp: Any) -> tuple[str, str]:
    assert resp.status_code == 422, resp.text
    error = resp.json()["error"]
    return error["code"], error["message"]


def test_every_text_field_answers_the_documented_limit(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.limits")
    before = check(c.get("/v1/models/acme.limits/samples", headers=h), 200)["items"]
    sid = before[0]["id"]

    def draft_calls(text: str) -> dict[str, Any]:
        return {
            "samples": c.post(
                "/v1/models/acme.limits/samples",
                json={"samples": [{"trait": "formality", "text": text, "quality": 1.0}]},
                headers=h,
            ),
            "sample edit": c.patch(f"/v1/models/acme.limits/samples/{sid}", json={"text": text}, headers=h),
            "pool": c.post("/v1/models/acme.limits/pool", json={"texts": ["fine", text]}, headers=h),
        }

    for text in LONG_TEXTS:
        for where, resp in draft_calls(text).items():
            code, message = _refusal(resp)
            assert code == "text_too_long", (where, message)
            assert f"has {len(text):,} characters; the limit is 20,000" in message, (where, message)
    assert check(c.get("/v1/models/acme.limits/samples", headers=h), 200)["items"] == before

    padded = "  " + "z" * 19_990 + " " * 6_000
    resp = c.post(
        "/v1/models/acme.limits/samples",
        json={"samples": [{"trait": "formality", "text": padded, "quality": 1.0}]},
        headers=h,
    )
    assert _refusal(resp)[0] == "text_too_long"
    at_limit = "  " + "z" * 19_990 + " " * 8
    sample = {"trait": "formality", "text": at_limit, "quality": 1.0}
    check(c.post("/v1/models/acme.limits/samples", json={"samples": [sample]}, headers=h), 201)

    train_ready(c, h, "acme.limits")
    for text in LONG_TEXTS:
        calls = {
            "score": c.post("/v1/models/acme.limits/score", json={"content": text}, headers=h),
            "score list": c.post("/v1/models/acme.limits/score", json={"content": ["ok", text]}, headers=h),
            "compare": c.post("/v1/models/acme.limits/score/compare", json={"a": "ok", "b": text}, headers=h),
        }
        for where, resp in calls.items():
            code, message = _refusal(resp)
            assert code == "text_too_long", (where, message)
            assert "the limit is 20,000" in message and "String should" not in message, (where, message)
        assert "text 2 has" in _refusal(calls["score list"])[1]
    for blank in ("", "   "):
        code, message = _refusal(c.post("/v1/models/acme.limits/score", json={"content": blank}, headers=h))
        assert (code, message) == ("empty_text", "body.content: text is empty")
    check(c.post("/v1/models/acme.limits/score", json={"content": at_limit}, headers=h), 200)


def test_the_schema_states_the_documented_limit(svc: Svc) -> None:
    schemas = check(svc.client.get("/v1/openapi.json"), 200)["components"]["schemas"]
    score_content = schemas["ScoreIn"]["properties"]["content"]["anyOf"]
    stated = [
        schemas["SampleIn"]["properties"]["text"],
        schemas["CompareIn"]["properties"]["a"],
        score_content[0],
        score_content[1]["items"],
        schemas["PoolIn"]["properties"]["texts"]["items"],
    ]
    for prop in stated:
        assert prop["maxLength"] == 20_000 and prop["minLength"] == 1, prop
