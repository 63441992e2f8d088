"""Perspective's own clients, unmodified, against the server on loopback (docs/perspective.md).

google-api-python-client runs Perspective's Python quickstart with only the discovery URL's host and the
key changed; plain HTTP (httpx) sends the published curl bodies verbatim (JSON5: unquoted keys, a trailing
comma). The server has `SCORING_PERSPECTIVE_MODEL` set, so no request names a model.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from googleapiclient import discovery
from googleapiclient.errors import HttpError

from tests.service.test_perspective import _key, _perspective_model
from tests.support.service import Svc, loopback, running

GOOGLE = "https://commentanalyzer.googleapis.com"
# Perspective's Python quickstart (developers.perspectiveapi.com, "Get started"), as published.
QUICKSTART = """
from googleapiclient import discovery
import json

API_KEY = 'copy-your-api-key-here'

client = discovery.build(
  "commentanalyzer",
  "v1alpha1",
  developerKey=API_KEY,
  discoveryServiceUrl="https://commentanalyzer.googleapis.com/$discovery/rest?version=v1alpha1",
  static_discovery=False,
)

analyze_request = {
  'comment': { 'text': 'friendly greetings from python' },
  'requestedAttributes': {'TOXICITY': {}}
}

response = client.comments().analyze(body=analyze_request).execute()
print(json.dumps(response, indent=2))
"""
# The curl bodies of Perspective's quickstart and API reference, verbatim.
CURL_ANALYZE = """{comment: {text: "what kind of idiot name is foo?"},
       languages: ["en"],
       requestedAttributes: {TOXICITY:{}} }"""
CURL_SUGGEST = """{comment: {text: "I guess it comes down a simple choice: Get busy living, or get busy dying."},
      attributeScores: {TOXICITY: {summaryScore: {value: 0}}},
      communityId: "/forum/movies",
      clientToken: "comment-53922",
     }"""  # noqa: E501


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Svc, str]]:
    """A trained `acme.moderation` (the server's Perspective model) served by uvicorn on 127.0.0.1."""
    data_dir: Path = tmp_path_factory.mktemp("perspective-clients")
    with running(data_dir, perspective_model="acme.moderation") as svc:
        _perspective_model(svc)
        with loopback(svc) as url:
            yield svc, url


def _quickstart(base: str, key: str) -> dict[str, Any]:
    """Run the quickstart with only the host and the key changed; its printed response, parsed."""
    code = QUICKSTART.replace(GOOGLE, base).replace("copy-your-api-key-here", key)
    out = io.StringIO()
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "quickstart.py", "exec"), namespace)  # noqa: S102 - the published script, as written
    _opened.append(namespace["client"])
    return json.loads(out.getvalue())


# The clients a test built: google-api-python-client leaves its connections open until closed, and a socket
# left to the garbage collector is a ResourceWarning (an error here) in whichever test collects it.
_opened: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _opened:
        _opened.pop().close()


def _client(base: str, key: str | None) -> Any:
    kwargs = {"developerKey": key} if key is not None else {}
    client = discovery.build(
        "commentanalyzer",
        "v1alpha1",
        discoveryServiceUrl=f"{base}/$discovery/rest?version=v1alpha1",
        static_discovery=False,
        cache_discovery=False,
        **kwargs,
    )
    _opened.append(client)
    return client


def test_python_quickstart_unchanged(served: tuple[Svc, str]) -> None:
    svc, base = served
    response = _quickstart(base, _key(svc.scorer))
    score = response["attributeScores"]["TOXICITY"]["summaryScore"]
    assert score["type"] == "PROBABILITY" and 0.0 <= score["value"] <= 1.0
    assert response["detectedLanguages"] == response["languages"]
    native = svc.client.post(
        "/v1/models/acme.moderation/score",
        json={"content": "friendly greetings from python"},
        headers=svc.scorer,
    ).json()
    toxicity = next(s["score"] for s in native["scores"] if s["trait"] == "toxicity")
    assert score["value"] == toxicity


def test_python_client_spans_suggestscore_and_errors(served: tuple[Svc, str]) -> None:
    svc, base = served
    text = "You are great \U0001f600. What an idiot you are!"
    analyzed = (
        _client(base, _key(svc.scorer))
        .comments()
        .analyze(
            body={"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}}, "spanAnnotations": True}
        )
        .execute()
    )
    spans = analyzed["attributeScores"]["TOXICITY"]["spanScores"]
    assert [(s["begin"], s["end"]) for s in spans] == [(0, 17), (18, 40)]  # UTF-16 code units

    author = _client(base, _key(svc.author))
    body = {
        "comment": {"text": "thanks, lovely idea"},
        "attributeScores": {"TOXICITY": {"summaryScore": {"value": 0}}},
    }
    assert author.comments().suggestscore(body={**body, "clientToken": "t-9"}).execute() == {
        "clientToken": "t-9"
    }

    request = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    cases = [
        (_client(base, "sk_not.a-key"), 400, "INVALID_ARGUMENT", "API_KEY_INVALID"),
        (_client(base, "k" * 201), 400, "INVALID_ARGUMENT", "API_KEY_INVALID"),
        (_client(base, None), 403, "PERMISSION_DENIED", "CREDENTIALS_MISSING"),
    ]
    for client, code, status, reason in cases:
        with pytest.raises(HttpError) as raised:  # not httplib2's MalformedHeader
            client.comments().analyze(body=request).execute()
        assert raised.value.status_code == code
        error = json.loads(raised.value.content)["error"]
        assert error["status"] == status and raised.value.error_details[0]["reason"] == reason
    with pytest.raises(HttpError) as unknown:
        _client(base, _key(svc.scorer)).comments().analyze(
            body={**request, "requestedAttributes": {"SPAM": {}}}
        ).execute()
    assert (
        unknown.value.status_code == 400 and unknown.value.error_details[0]["reason"] == "unknown_attribute"
    )
    with pytest.raises(HttpError) as scorer_suggests:
        _client(base, _key(svc.scorer)).comments().suggestscore(body=body).execute()
    assert scorer_suggests.value.status_code == 403


def test_published_curl_bodies_over_plain_http(served: tuple[Svc, str]) -> None:
    svc, base = served
    headers = {"Content-Type": "application/json"}  # curl's -H, as published
    analyze = httpx.post(
        f"{base}/v1alpha1/comments:analyze?key={_key(svc.scorer)}", content=CURL_ANALYZE, headers=headers
    )
    assert analyze.status_code == 200, analyze.text
    assert set(analyze.json()["attributeScores"]) == {"TOXICITY"} and analyze.json()["languages"] == ["en"]
    suggest = httpx.post(
        f"{base}/v1alpha1/comments:suggestscore?key={_key(svc.author)}", content=CURL_SUGGEST, headers=headers
    )
    assert suggest.status_code == 200, suggest.text
    assert suggest.json() == {"clientToken": "comment-53922"}  # Perspective's documented response
