"""The Perspective-compatible surface (/v1alpha1/comments:analyze, :suggestscore) through the real app.

The first requests are copied from Perspective's public API reference (conversationai/perspectiveapi,
api_reference.md); the model they score has traits named like Perspective's attributes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.service import Svc, check, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

ANALYZE = "/v1alpha1/comments:analyze"
SUGGEST = "/v1alpha1/comments:suggestscore"

# Perspective's documented AnalyzeComment example request, verbatim.
DOC_ANALYZE: dict[str, Any] = {
    "comment": {"text": "What kind of idiot name is foo? Sorry, I like your name."},
    "languages": ["en"],
    "requestedAttributes": {"TOXICITY": {}, "UNSUBSTANTIAL": {}},
}
# Perspective's documented SuggestCommentScore example request, verbatim.
DOC_SUGGEST = {
    "comment": {"text": "I guess it comes down a simple choice: Get busy living, or get busy dying."},
    "attributeScores": {"TOXICITY": {"summaryScore": {"value": 0}}},
    "communityId": "/forum/movies",
    "clientToken": "comment-53922",
}

RUDE = ["you are an idiot", "what a stupid moron", "shut up you fool", "idiot name, dumb idea"]
KIND = ["thank you so much", "I like your name", "what a lovely idea", "have a nice day friend"]
SHORT = ["ok", "lol", "yes", "foo"]
LONG = [
    "I think the proposal needs a clearer budget section before we vote on it.",
    "The article explains the history of the bridge and why it was rebuilt in 1990.",
    "Could you share the data behind the second chart so we can check the trend?",
    "My experience with the product was mixed: setup was easy but support was slow.",
]


def _perspective_model(svc: Svc, handle: str = "acme.moderation") -> str:
    c, h = svc.client, svc.author
    make_model(c, h, handle, with_data=False)
    traits = [
        {"name": "Toxicity", "positive_label": "toxic", "negative_label": "civil"},
        {"name": "Unsubstantial", "positive_label": "trivial", "negative_label": "substantial"},
    ]
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": traits}, headers=h), 201)
    samples = [{"trait": "toxicity", "text": t, "quality": 1.0} for t in RUDE]
    samples += [{"trait": "toxicity", "text": t, "quality": 0.0} for t in KIND]
    samples += [{"trait": "unsubstantial", "text": t, "quality": 1.0} for t in SHORT]
    samples += [{"trait": "unsubstantial", "text": t, "quality": 0.0} for t in LONG]
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": samples}, headers=h), 201)
    train_ready(c, h, handle)
    return handle


def _key(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def _google_error(resp: Any, code: int, status: str, reason: str) -> None:
    assert resp.status_code == code, resp.text
    err = resp.json()["error"]
    assert err["code"] == code and err["status"] == status and isinstance(err["message"], str)
    assert err["details"][0]["reason"] == reason
    assert err["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert err["details"][0]["metadata"]["request_id"] == resp.headers["X-Request-Id"]


def _key_error(resp: Any, *, missing: bool) -> None:
    """Google's answer to a missing key (403 CREDENTIALS_MISSING) or an invalid one (400 API_KEY_INVALID)."""
    code, status, reason = (
        (403, "PERMISSION_DENIED", "CREDENTIALS_MISSING")
        if missing
        else (
            400,
            "INVALID_ARGUMENT",
            "API_KEY_INVALID",
        )
    )
    _google_error(resp, code, status, reason)
    assert resp.json()["error"]["details"][0]["domain"] == "googleapis.com"
    assert "www-authenticate" not in resp.headers  # httplib2 raised MalformedHeader on a bare `Bearer`


def _score(value: Any) -> float:
    assert set(value) == {"value", "type"} and value["type"] == "PROBABILITY"
    assert isinstance(value["value"], float) and 0.0 <= value["value"] <= 1.0
    return float(value["value"])


def test_documented_request_parses_as_perspective_response(svc: Svc) -> None:
    handle = _perspective_model(svc)
    url = f"{ANALYZE}?key={_key(svc.scorer)}"
    body = check(svc.client.post(url, json={**DOC_ANALYZE, "model": handle}), 200)
    assert set(body) == {"attributeScores", "languages", "detectedLanguages"}
    assert set(body["attributeScores"]) == {"TOXICITY", "UNSUBSTANTIAL"}
    for attr in body["attributeScores"].values():
        assert set(attr) == {"summaryScore"}  # spans only when asked for
        _score(attr["summaryScore"])
    assert body["languages"] == ["en"] and body["detectedLanguages"] == ["en"]

    # The same scores as the native endpoint's, for the trait each attribute names.
    native = check(
        svc.client.post(
            f"/v1/models/{handle}/score", json={"content": DOC_ANALYZE["comment"]["text"]}, headers=svc.scorer
        ),
        200,
    )
    by_trait = {s["trait"]: s["score"] for s in native["scores"]}
    assert body["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == by_trait["toxicity"]
    assert body["attributeScores"]["UNSUBSTANTIAL"]["summaryScore"]["value"] == by_trait["unsubstantial"]


def test_span_scores_are_sentences_scored_alone(svc: Svc) -> None:
    handle = _perspective_model(svc)
    req = {**DOC_ANALYZE, "spanAnnotations": True, "clientToken": "tok-1", "model": handle}
    body = check(svc.client.post(ANALYZE, json=req, headers=svc.scorer), 200)
    assert body["clientToken"] == "tok-1"
    text = DOC_ANALYZE["comment"]["text"]
    for name in ("TOXICITY", "UNSUBSTANTIAL"):
        spans = body["attributeScores"][name]["spanScores"]
        assert [(s["begin"], s["end"]) for s in spans] == [
            (0, 31),
            (32, 56),
        ]  # Perspective's documented spans
        assert text[0:31] == "What kind of idiot name is foo?"
        for span in spans:
            assert isinstance(span["begin"], int) and isinstance(span["end"], int)
            alone = {
                "comment": {"text": text[span["begin"] : span["end"]]},
                "requestedAttributes": {name: {}},
                "model": handle,
            }
            single = check(svc.client.post(ANALYZE, json=alone, headers=svc.scorer), 200)
            assert _score(span["score"]) == single["attributeScores"][name]["summaryScore"]["value"]
    tox = body["attributeScores"]["TOXICITY"]["spanScores"]
    assert tox[0]["score"]["value"] > tox[1]["score"]["value"]  # the insult is the toxic sentence


def test_threshold_version_pinning_and_configured_model(tmp_path: Any, database_url: str) -> None:
    from tests.support.service import running

    with running(tmp_path, database_url=database_url, perspective_model="acme.moderation") as svc:
        handle = _perspective_model(svc)
        c, h = svc.client, svc.author
        text = "You are an idiot and nobody wants you here. Thank you, I really like your name."
        full = check(
            c.post(
                ANALYZE,
                json={
                    "comment": {"text": text},
                    "requestedAttributes": {"TOXICITY": {}},
                    "spanAnnotations": True,
                },
                headers=svc.scorer,
            ),
            200,
        )
        assert full["detectedLanguages"] == ["en"] and full["languages"] == ["en"]  # detected when not given
        values = [s["score"]["value"] for s in full["attributeScores"]["TOXICITY"]["spanScores"]]
        summary = full["attributeScores"]["TOXICITY"]["summaryScore"]["value"]
        cut = (min(values) + max(values)) / 2
        req = {
            "comment": {"text": text},
            "spanAnnotations": True,
            "requestedAttributes": {"TOXICITY": {"scoreThreshold": cut}},
        }
        kept = check(c.post(ANALYZE, json=req, headers=svc.scorer), 200)["attributeScores"]["TOXICITY"]
        assert [s["score"]["value"] for s in kept["spanScores"]] == [v for v in values if v >= cut]
        assert ("summaryScore" in kept) == (summary >= cut)
        above = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {"scoreThreshold": 1.0}}}
        assert check(c.post(ANALYZE, json=above, headers=svc.scorer), 200)["attributeScores"] == {}

        # v2 (retune), tag v1 "stable": ATTRIBUTE@1, @v1-style numbers and @tag all reach v1.
        check(c.post(f"/v1/models/{handle}/versions/stable", headers=h), 200)
        train_ready(c, h, handle, reoptimize_params=True)
        pinned: dict[str, dict[str, Any]] = {
            "TOXICITY@1": {},
            "TOXICITY@stable": {},
            "TOXICITY@2": {},
            "toxicity": {},
        }
        got = check(
            c.post(
                ANALYZE, json={"comment": {"text": text}, "requestedAttributes": pinned}, headers=svc.scorer
            ),
            200,
        )["attributeScores"]
        assert set(got) == set(pinned)
        v1 = check(
            c.post(f"/v1/models/{handle}/score", json={"content": text, "version": "v1"}, headers=svc.scorer),
            200,
        )["scores"][0]["score"]
        assert got["TOXICITY@1"]["summaryScore"]["value"] == v1
        assert got["TOXICITY@stable"]["summaryScore"]["value"] == v1
        assert got["TOXICITY@2"] == got["toxicity"]  # v2 is active
        missing = c.post(
            ANALYZE,
            json={"comment": {"text": text}, "requestedAttributes": {"TOXICITY@9": {}}},
            headers=svc.scorer,
        )
        _google_error(missing, 404, "NOT_FOUND", "version_not_found")


def test_errors_in_google_shape(svc: Svc) -> None:
    handle = _perspective_model(svc)
    c = svc.client
    ok = {**DOC_ANALYZE, "model": handle}
    for path in (ANALYZE, SUGGEST):  # every key problem in Google's shape (docs/perspective.md, Keys)
        _key_error(c.post(path, json=ok), missing=True)
        _key_error(c.post(f"{path}?key=", json=ok), missing=True)
        _key_error(c.post(path, json=ok, headers={"Authorization": "Bearer "}), missing=True)
        _key_error(c.post(f"{path}?key=nope", json=ok), missing=False)  # malformed
        _key_error(c.post(f"{path}?key={'k' * 201}", json=ok), missing=False)  # over-long: was a 422
        _key_error(c.post(path, json=ok, headers={"Authorization": "Bearer sk_x.y"}), missing=False)
        unknown = _key(svc.scorer)[:-4] + "0000"  # well-formed, not issued
        _key_error(c.post(f"{path}?key={unknown}", json=ok), missing=False)
    _google_error(c.post(ANALYZE, json=ok, headers=svc.other), 404, "NOT_FOUND", "model_not_found")
    _google_error(c.post(ANALYZE, json=DOC_ANALYZE, headers=svc.scorer), 400, "INVALID_ARGUMENT", "no_model")
    bad_attr = {**ok, "requestedAttributes": {"SPAM": {}}}
    _google_error(
        c.post(ANALYZE, json=bad_attr, headers=svc.scorer), 400, "INVALID_ARGUMENT", "unknown_attribute"
    )
    bad_type = {**ok, "requestedAttributes": {"TOXICITY": {"scoreType": "STD_DEV_SCORE"}}}
    _google_error(
        c.post(ANALYZE, json=bad_type, headers=svc.scorer), 400, "INVALID_ARGUMENT", "validation_error"
    )
    no_text = {**ok, "comment": {"text": ""}}
    _google_error(
        c.post(ANALYZE, json=no_text, headers=svc.scorer), 400, "INVALID_ARGUMENT", "validation_error"
    )
    not_json = c.post(ANALYZE, content=b"{nope", headers={**svc.scorer, "Content-Type": "application/json"})
    _google_error(not_json, 400, "INVALID_ARGUMENT", "validation_error")
    wrong_type = {**ok, "spanAnnotations": "yes"}
    _google_error(
        c.post(ANALYZE, json=wrong_type, headers=svc.scorer), 400, "INVALID_ARGUMENT", "validation_error"
    )
    make_model(c, svc.author, "acme.untrained")
    draft = {**ok, "model": "acme.untrained", "requestedAttributes": {"FORMALITY": {}}}
    _google_error(
        c.post(ANALYZE, json=draft, headers=svc.scorer), 400, "FAILED_PRECONDITION", "no_active_version"
    )


def test_suggestscore_is_feedback_for_owners_only(svc: Svc) -> None:
    handle = _perspective_model(svc)
    c = svc.client
    req = {**DOC_SUGGEST, "model": handle}
    _key_error(c.post(SUGGEST, json=req), missing=True)
    _google_error(c.post(SUGGEST, json=req, headers=svc.scorer), 403, "PERMISSION_DENIED", "forbidden")
    _google_error(c.post(SUGGEST, json=req, headers=svc.other), 404, "NOT_FOUND", "model_not_found")
    reader = svc.key(["public"], "authoring")  # authoring, but not the owner of acme
    _google_error(c.post(SUGGEST, json=req, headers=reader), 404, "NOT_FOUND", "model_not_found")
    before = check(c.get(f"/v1/models/{handle}", headers=svc.author), 200)["buffered_feedback"]
    body = check(c.post(f"{SUGGEST}?key={_key(svc.author)}", json=req), 200)
    assert body == {"clientToken": "comment-53922"}  # Perspective's documented response
    assert check(c.get(f"/v1/models/{handle}", headers=svc.author), 200)["buffered_feedback"] == before + 1

    bad = {**req, "attributeScores": {"SPAM": {"summaryScore": {"value": 1}}}}
    _google_error(c.post(SUGGEST, json=bad, headers=svc.author), 400, "INVALID_ARGUMENT", "unknown_attribute")
    out_of_range = {**req, "attributeScores": {"TOXICITY": {"summaryScore": {"value": 2}}}}
    _google_error(
        c.post(SUGGEST, json=out_of_range, headers=svc.author), 400, "INVALID_ARGUMENT", "validation_error"
    )
    # A field name with a NUL in it is named in the message as U+FFFD: no error message carries a NUL.
    nul_name = {**req, "attributeScores": {"TOX\u0000IC": {}}}
    resp = c.post(SUGGEST, json=nul_name, headers=svc.author)
    _google_error(resp, 400, "INVALID_ARGUMENT", "validation_error")
    assert "\x00" not in resp.json()["error"]["message"] and "TOX\ufffdIC" in resp.json()["error"]["message"]
    assert check(c.get(f"/v1/models/{handle}", headers=svc.author), 200)["buffered_feedback"] == before + 1


def test_zero_data_retention_refuses_suggestions(svc: Svc) -> None:
    handle = _perspective_model(svc)
    c = svc.client
    check(c.patch(f"/v1/models/{handle}", json={"zero_data_retention": True}, headers=svc.author), 200)
    req = {**DOC_SUGGEST, "model": handle}
    _google_error(
        c.post(SUGGEST, json=req, headers=svc.author), 400, "FAILED_PRECONDITION", "zero_data_retention"
    )
    assert check(c.get(f"/v1/models/{handle}", headers=svc.author), 200)["buffered_feedback"] == 0
    # analyze still works (and stores nothing)
    body = check(c.post(ANALYZE, json={**DOC_ANALYZE, "model": handle}, headers=svc.scorer), 200)
    assert set(body["attributeScores"]) == {"TOXICITY", "UNSUBSTANTIAL"}


def test_span_offsets_are_utf16_code_units(svc: Svc) -> None:
    """v1alpha1's SpanScore counts UTF-16 code units (its discovery description; JavaScript slices so)."""
    handle = _perspective_model(svc)
    text = "You are great \U0001f600. What an idiot you are! \U0001d4b3 \U0001f1eb\U0001f1f7 ok? Fin."
    req = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}}, "spanAnnotations": True}
    body = check(svc.client.post(ANALYZE, json={**req, "model": handle}, headers=svc.scorer), 200)
    spans = [(s["begin"], s["end"]) for s in body["attributeScores"]["TOXICITY"]["spanScores"]]
    units = text.encode("utf-16-le")

    def js_slice(a: int, b: int) -> str:  # String.prototype.slice on the same text
        return units[2 * a : 2 * b].decode("utf-16-le")

    assert [js_slice(a, b) for a, b in spans] == [
        "You are great \U0001f600.",
        "What an idiot you are!",
        "\U0001d4b3 \U0001f1eb\U0001f1f7 ok?",
        "Fin.",
    ]
    assert spans[:2] == [(0, 17), (18, 40)]  # code points would say (0, 16), (17, 39)


def test_published_json5_bodies_on_perspective_paths_only(svc: Svc) -> None:
    """The quickstart's curl bodies (unquoted keys, a trailing comma) parse here; /v1 stays strict JSON."""
    handle = _perspective_model(svc)
    headers = {**svc.scorer, "Content-Type": "application/json"}
    analyze = (
        '{comment: {text: "what kind of idiot name is foo?"},\n languages: ["en"],\n'
        f" requestedAttributes: {{TOXICITY:{{}}}}, model: '{handle}', }}"
    )
    body = check(svc.client.post(ANALYZE, content=analyze.encode(), headers=headers), 200)
    assert set(body["attributeScores"]) == {"TOXICITY"}
    suggest = (
        '{comment: {text: "hi"}, attributeScores: {TOXICITY: {summaryScore: {value: 0,},},},'
        f' model: "{handle}",}}'
    )
    author = {**svc.author, "Content-Type": "application/json"}
    assert check(svc.client.post(SUGGEST, content=suggest.encode(), headers=author), 200) == {}
    native = svc.client.post(f"/v1/models/{handle}/score", content=b"{content: 'hi',}", headers=headers)
    assert native.status_code == 422 and native.json()["error"]["code"] == "validation_error"
    # The same limits as JSON: nesting past the interpreter's depth and bytes that are not UTF-8.
    deep = b'{"comment": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    for raw in (deep, b"{comment: {text: '\xff'}}", b"{comment: {text: 'a'}} trailing"):
        resp = svc.client.post(ANALYZE, content=raw, headers=headers)
        _google_error(resp, 400, "INVALID_ARGUMENT", "validation_error")


def test_discovery_document_paths_and_root_url(tmp_path: Any, database_url: str) -> None:
    from tests.support.service import running

    for public, want in ((None, "http://testserver/"), ("https://scoring.example.org/api/", None)):
        with running(tmp_path / str(bool(public)), database_url=database_url, public_url=public) as svc:
            c = svc.client
            first = check(c.get("/$discovery/rest?version=v1alpha1"), 200)
            assert check(c.get("/discovery/v1/apis/commentanalyzer/v1alpha1/rest"), 200) == first
            assert first["rootUrl"] == (want or public) and first["servicePath"] == ""
            methods = first["resources"]["comments"]["methods"]
            assert {m["path"] for m in methods.values()} == {
                "v1alpha1/comments:analyze",
                "v1alpha1/comments:suggestscore",
            }
            for method in methods.values():  # every $ref resolves
                for ref in (method["request"]["$ref"], method["response"]["$ref"]):
                    assert ref in first["schemas"]
            span = first["schemas"]["SpanScore"]["properties"]["begin"]["description"]
            assert "UTF-16" in span
            _google_error(c.get("/$discovery/rest?version=v1"), 404, "NOT_FOUND", "not_found")
