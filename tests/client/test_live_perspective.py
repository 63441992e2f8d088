"""The client's Perspective-compatible methods against the real service."""

from __future__ import annotations

import pytest

from core.client import AuthenticationError, BadRequestError, Client, NotFoundError, PermissionDeniedError
from tests.support.client import Service, make_draft

TEXT = "Dear Sir or Madam, please find the report attached. hey lol gonna grab food"


@pytest.fixture(scope="module")
def trained(service: Service) -> str:
    with service.client() as c:
        handle = make_draft(c, service.handle("perspective"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        c.tag_version(handle, "prod")
    return handle


def test_analyze_comment_matches_native_scores(service: Service, trained: str) -> None:
    with service.client("scorer") as c:
        out = c.analyze_comment(
            TEXT, ["FORMALITY", "Formality@prod"], model=trained, span_annotations=True, client_token="t-1"
        )
        native = c.score(trained, TEXT).scores[0].score
    assert out.client_token == "t-1"
    assert set(out.attribute_scores) == {"FORMALITY", "Formality@prod"}
    formality = out.attribute_scores["FORMALITY"]
    assert formality.summary_score is not None
    assert (formality.summary_score.value, formality.summary_score.type) == (native, "PROBABILITY")
    assert [(s.begin, s.end) for s in formality.span_scores] == [(0, 51), (52, 75)]
    assert out.attribute_scores["Formality@prod"] == formality  # prod is the active version
    first, last = (s.score.value for s in formality.span_scores)
    assert first > last  # the formal sentence scores more formal than the casual one


def test_errors_are_typed(service: Service, trained: str) -> None:
    with service.client("scorer") as c:
        with pytest.raises(BadRequestError) as bad:
            c.analyze_comment(TEXT, ["SPAM"], model=trained)
        assert bad.value.code == "unknown_attribute" and bad.value.status == 400
        with pytest.raises(NotFoundError) as missing:
            c.analyze_comment(TEXT, ["FORMALITY@v9"], model=trained)
        assert missing.value.code == "version_not_found"
        with pytest.raises(PermissionDeniedError):
            c.suggest_comment_score(TEXT, {"FORMALITY": 1.0}, model=trained)
    anon = Client("http://testserver/v1", "sk_nope", transport=service.app_transport)
    with anon, pytest.raises(AuthenticationError):
        anon.analyze_comment(TEXT, ["FORMALITY"], model=trained)
    with service.client("outsider") as c, pytest.raises(NotFoundError):
        c.suggest_comment_score(TEXT, {"FORMALITY": 1.0}, model=trained)


def test_suggest_comment_score_buffers_feedback(service: Service, trained: str) -> None:
    with service.client() as c:
        before = c.get_model(trained).buffered_feedback
        assert before is not None
        answer = c.suggest_comment_score(TEXT, {"FORMALITY": 0.0}, model=trained, client_token="x")
        assert answer.model_dump(by_alias=True, exclude_none=True) == {"clientToken": "x"}
        assert c.get_model(trained).buffered_feedback == before + 1
        handle = make_draft(c, service.handle("zdr"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        c.update_model(handle, zero_data_retention=True)
        with pytest.raises(BadRequestError) as refused:  # FAILED_PRECONDITION
            c.suggest_comment_score(TEXT, {"FORMALITY": 0.0}, model=handle)
        assert refused.value.code == "zero_data_retention"


def test_perspective_discovery_document(service: Service) -> None:
    with service.client("scorer") as c:
        doc = c.perspective_discovery()
    assert doc.name == "commentanalyzer" and doc.version == "v1alpha1"
    assert doc.root_url == "http://testserver/"  # the request's own scheme and host
    assert doc.methods == ["analyze", "suggestscore"]
    assert doc.model_dump(by_alias=True)["rootUrl"] == doc.root_url  # the whole document, as served
