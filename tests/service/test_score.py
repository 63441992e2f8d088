"""Scoring: JSON and raw bodies, lists, explanation (one content a request, none for a client that went away),
text/plain chart, compare, feedback, ZDR."""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest

from core.embedders import CachedEmbedder
from tests.support.service import Svc, check, error_code, make_model, train_ready, wait_settled

FORMAL_TEXT = "Dear Sir, please find attached the signed agreement for your review."
CASUAL_TEXT = "lol yo dude wanna grab pizza haha"


def test_score_shapes(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.sc")
    assert error_code(c.post("/v1/models/acme.sc/score", json={"content": "x"}, headers=h), 409) == (
        "no_active_version"
    )
    train_ready(c, h, "acme.sc")
    check(c.post("/v1/models/acme.sc/versions/prod", headers=h), 200)

    one = check(c.post("/v1/models/acme.sc/score", json={"content": FORMAL_TEXT}, headers=svc.scorer), 200)
    assert (one["handle"], one["version_no"], one["version_tags"]) == ("acme.sc", 1, ["prod"])
    assert [s["trait"] for s in one["scores"]] == ["formality", "sentiment"]
    for s in one["scores"]:
        assert 0.0 <= s["score"] <= 1.0
        assert s["label"] == (s["positive_label"] if s["score"] >= 0.5 else s["negative_label"])
    assert "explanation" not in one and "results" not in one
    casual = check(c.post("/v1/models/acme.sc/score", json={"content": CASUAL_TEXT}, headers=h), 200)
    assert one["scores"][0]["score"] > casual["scores"][0]["score"]

    # A list of contents.
    many = check(
        c.post("/v1/models/acme.sc/score", json={"content": [FORMAL_TEXT, CASUAL_TEXT]}, headers=h), 200
    )
    assert [r["index"] for r in many["results"]] == [0, 1] and "scores" not in many
    assert many["results"][0]["scores"] == one["scores"]
    assert error_code(c.post("/v1/models/acme.sc/score", json={"content": ["x"] * 101}, headers=h), 422) == (
        "validation_error"
    )
    assert (
        error_code(c.post("/v1/models/acme.sc/score", json={"content": "  "}, headers=h), 422) == "empty_text"
    )

    # Raw text body, with query parameters.
    raw = c.post(
        "/v1/models/acme.sc/score",
        content=FORMAL_TEXT.encode(),
        params={"explain": "true"},
        headers={**h, "Content-Type": "text/plain; charset=utf-8"},
    )
    raw_body = check(raw, 200)
    assert raw_body["scores"] == one["scores"]
    assert set(raw_body["explanation"]) == {"formality", "sentiment"}
    words = raw_body["explanation"]["formality"]
    assert all({"word", "contribution", "axis", "strength"} == set(w) for w in words)
    # The score's change and the axis change agree in sign; the strength is the axis change scaled.
    assert all(w["axis"] * w["strength"] >= 0 for w in words)  # strength: axis in noise units
    assert (
        error_code(
            c.post(
                "/v1/models/acme.sc/score", content=b"<x/>", headers={**h, "Content-Type": "application/xml"}
            ),
            415,
        )
        == "unsupported_media_type"
    )

    # Explanation in lists.
    explained = check(
        c.post("/v1/models/acme.sc/score", json={"content": [FORMAL_TEXT], "explain": True}, headers=h), 200
    )
    assert set(explained["results"][0]["explanation"]) == {"formality", "sentiment"}

    # Accept: text/plain → a bar chart between the pole labels.
    chart = c.post(
        "/v1/models/acme.sc/score", json={"content": FORMAL_TEXT}, headers={**h, "Accept": "text/plain"}
    )
    assert chart.status_code == 200 and chart.headers["content-type"].startswith("text/plain")
    lines = chart.text.strip().splitlines()
    assert lines[0] == "acme.sc v1 (prod)"
    assert "casual [" in lines[1] and "] formal" in lines[1] and "negative [" in lines[2]
    assert lines[1].count("#") + lines[1].count(".") >= 20

    # Version addressing: an older version by number or tag.
    train_ready(c, h, "acme.sc", reoptimize_params=True)
    old = check(
        c.post("/v1/models/acme.sc/score", json={"content": FORMAL_TEXT, "version": "prod"}, headers=h), 200
    )
    assert (old["version_no"], old["version_tags"]) == (1, ["prod"])
    new = check(c.post("/v1/models/acme.sc/score", json={"content": FORMAL_TEXT}, headers=h), 200)
    assert (new["version_no"], new["version_tags"]) == (2, [])
    assert error_code(
        c.post("/v1/models/acme.sc/score", json={"content": "x", "version": "v9"}, headers=h), 404
    ) == ("version_not_found")


def test_compare(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.cmp")
    train_ready(c, h, "acme.cmp")
    out = check(
        c.post(
            "/v1/models/acme.cmp/score/compare", json={"a": CASUAL_TEXT, "b": FORMAL_TEXT}, headers=svc.scorer
        ),
        200,
    )
    assert out["handle"] == "acme.cmp" and out["version_no"] == 1
    for d, a, b in zip(out["difference"], out["a"]["scores"], out["b"]["scores"], strict=True):
        assert d["trait"] == a["trait"] == b["trait"]
        assert d["delta"] == pytest.approx(b["score"] - a["score"], abs=1e-5)
    assert out["difference"][0]["delta"] > 0  # b is the more formal one
    assert error_code(c.post("/v1/models/acme.cmp/score/compare", json={"a": "x"}, headers=h), 422) == (
        "validation_error"
    )


def test_feedback_buffer_triggers_retraining(svc: Svc) -> None:
    c, h = svc.client, svc.author  # retrain_buffer is 3 in the test settings
    make_model(c, h, "acme.fb")
    train_ready(c, h, "acme.fb")
    body = {
        "content": "Respectfully yours, the board of directors.",
        "feedback": [{"trait": "formality", "quality": 1.0}, {"trait": "sentiment", "quality": 0.6}],
    }
    out = check(c.post("/v1/models/acme.fb/score", json=body, headers=h), 200)
    assert out["feedback_buffered"] == 2 and out["scores"]
    model = check(c.get("/v1/models/acme.fb", headers=h), 200)
    assert model["buffered_feedback"] == 2 and model["state"] == "ready"
    assert (
        error_code(
            c.post(
                "/v1/models/acme.fb/score",
                json={"content": ["a", "b"], "feedback": [{"trait": "formality", "quality": 1}]},
                headers=h,
            ),
            422,
        )
        == "validation_error"
    )
    assert (
        error_code(
            c.post(
                "/v1/models/acme.fb/score",
                json={"content": "a", "feedback": [{"trait": "nope", "quality": 1}]},
                headers=h,
            ),
            422,
        )
        == "unknown_trait"
    )
    out = check(
        c.post(
            "/v1/models/acme.fb/score",
            json={"content": "sup lol", "feedback": [{"trait": "Formality", "quality": 0.0}]},
            headers=h,
        ),
        200,
    )
    assert out["feedback_buffered"] == 1
    model = wait_settled(c, "acme.fb", h)
    assert model["state"] == "ready" and model["version_no"] == 2 and model["buffered_feedback"] == 0
    assert model["last_operation"]["kind"] == "retrain" and model["last_operation"]["status"] == "succeeded"
    v2 = check(c.get("/v1/models/acme.fb/versions/v2", headers=h), 200)
    assert v2["triggered_by"] == "retrain_buffered" and v2["sample_count"] == 27
    fed = check(c.get("/v1/models/acme.fb/samples", params={"provenance": "feedback"}, headers=h), 200)[
        "items"
    ]
    assert sorted((s["trait"], s["quality"]) for s in fed) == [
        ("formality", 0.0),
        ("formality", 1.0),
        ("sentiment", 0.6),
    ]


def _files_contain(data_dir: Path, needle: bytes) -> bool:
    return any(needle in p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def test_zero_data_retention(svc: Svc, caplog: pytest.LogCaptureFixture) -> None:
    c, h = svc.client, svc.author
    # Turning it on purges samples and buffered feedback at once.
    make_model(c, h, "acme.plain")
    train_ready(c, h, "acme.plain")
    check(
        c.post(
            "/v1/models/acme.plain/score",
            json={"content": "hello there", "feedback": [{"trait": "formality", "quality": 0.2}]},
            headers=h,
        ),
        200,
    )
    before = check(c.get("/v1/models/acme.plain", headers=h), 200)
    assert before["sample_count"] == 24 and before["buffered_feedback"] == 1
    after = check(c.patch("/v1/models/acme.plain", json={"zero_data_retention": True}, headers=h), 200)
    assert (
        after["zero_data_retention"] is True
        and after["sample_count"] == 0
        and after["buffered_feedback"] == 0
    )
    # Rule 3 (and so rule 2: the buffer never fills): feedback is rejected.
    resp = c.post(
        "/v1/models/acme.plain/score",
        json={"content": "hi", "feedback": [{"trait": "formality", "quality": 1}]},
        headers=h,
    )
    assert error_code(resp, 409) == "zero_data_retention"
    assert check(c.get("/v1/models/acme.plain", headers=h), 200)["buffered_feedback"] == 0
    # Turning it off applies going forward only.
    off = check(c.patch("/v1/models/acme.plain", json={"zero_data_retention": False}, headers=h), 200)
    assert off["sample_count"] == 0

    # Rule 1: samples are purged when a training completes; the version keeps its sample_count.
    make_model(c, h, "acme.zdr", zero_data_retention=True)
    assert check(c.get("/v1/models/acme.zdr", headers=h), 200)["sample_count"] == 24
    model = train_ready(c, h, "acme.zdr")
    assert model["sample_count"] == 0
    assert check(c.get("/v1/models/acme.zdr/versions/v1", headers=h), 200)["sample_count"] == 24
    assert check(c.get("/v1/models/acme.zdr/samples", headers=h), 200)["items"] == []

    # Rule 4: scored content lands nowhere: not the database, not the embedding cache, not the logs.
    cached = svc.ctx.embedders.get()  # the cached embedder; its store counts vectors
    assert isinstance(cached, CachedEmbedder)
    store = cached.store
    cached_before = len(store)
    secret = "zdr-marker-7f3a9c quarterly figures for the private board"
    caplog.set_level(logging.DEBUG)
    check(c.post("/v1/models/acme.zdr/score", json={"content": secret, "explain": True}, headers=h), 200)
    check(
        c.post("/v1/models/acme.zdr/score/compare", json={"a": secret, "b": secret + " again"}, headers=h),
        200,
    )
    assert len(store) == cached_before
    assert not _files_contain(svc.ctx.settings.data_dir, b"zdr-marker-7f3a9c")
    assert "zdr-marker-7f3a9c" not in caplog.text
    # Control: a model without ZDR does cache the vectors of what it scores.
    check(
        c.post("/v1/models/acme.plain/score", json={"content": "a brand new text to embed"}, headers=h), 200
    )
    assert len(store) == cached_before + 1


def test_explain_is_one_content_per_request(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.h")
    train_ready(c, h, "acme.h")
    resp = c.post(
        "/v1/models/acme.h/score", json={"content": ["one text", "two"], "explain": True}, headers=h
    )
    assert error_code(resp, 422) == "validation_error"
    assert resp.json()["error"]["details"][0]["loc"] == ["body", "explain"]
    one = check(
        c.post("/v1/models/acme.h/score", json={"content": ["one text"], "explain": True}, headers=h), 200
    )
    assert set(one["results"][0]["explanation"]) == {"formality", "sentiment"}
    many = check(c.post("/v1/models/acme.h/score", json={"content": ["one text", "two"]}, headers=h), 200)
    assert len(many["results"]) == 2 and "explanation" not in many["results"][0]


def test_no_explanation_is_computed_for_a_client_that_went_away(
    svc: Svc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app called as the server would: the body arrives, then the client disconnects. The scores are
    computed, the explanation (the costly part) is not: the answer is 499, nobody is there to read it."""
    import anyio

    c, h = svc.client, svc.author
    make_model(c, h, "acme.h")
    train_ready(c, h, "acme.h")
    explained: list[str] = []
    from service.domain import scoring

    real_explain = scoring.explanation

    def counting_explain(scorer: Any, text: str) -> Any:
        explained.append(text)
        return real_explain(scorer, text)

    body = json.dumps({"content": "Dear Sir, kind regards.", "explain": True}).encode()

    async def call(gone: bool) -> list[MutableMapping[str, Any]]:
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        if gone:
            messages.append({"type": "http.disconnect"})

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await anyio.sleep_forever()  # a client still there sends nothing more
            raise AssertionError

        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        headers = [(k.lower().encode(), v.encode()) for k, v in h.items()]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/v1/models/acme.h/score", "raw_path": b"/v1/models/acme.h/score",
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1), "server": ("testserver", 80),
            "headers": [*headers, (b"content-type", b"application/json")], "app": svc.app,
        }  # fmt: skip
        await svc.app(scope, receive, send)
        return sent

    monkeypatch.setattr(scoring, "explanation", counting_explain)
    there = anyio.run(call, False)
    assert there[0]["status"] == 200 and explained == ["Dear Sir, kind regards."]
    gone = anyio.run(call, True)
    assert gone[0]["status"] == 499 and explained == ["Dear Sir, kind regards."]
