"""Perspective API compatibility: sentence spans, language detection, errors (the bodies are
`service/schemas/perspective.py`).

Pure helpers for `service/routes/perspective.py`. Perspective clients parse Google's API error shape
(`{"error": {"code": <http status>, "message", "status": "<canonical code>"}}`), not the service's own
envelope, so errors on this surface are rendered here (docs/perspective.md).
"""

from __future__ import annotations

import re

from fastapi.responses import JSONResponse

from core.embedders.languages import language_code, languages_read
from core.json_types import JsonObject
from service.errors import REQUEST_ID_HEADER, ApiError, echoable

SCORE_TYPE = "PROBABILITY"
#: Sentences annotated with span scores at most (the rest of a longer text is not annotated).
MAX_SPANS = 100
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]+|[^.!?\n]+")
_VERSION_NO = re.compile(r"^\d+$")


def split_attribute(name: str) -> tuple[str, str | None]:
    """`TOXICITY@3` → (`TOXICITY`, `v3`); `TOXICITY@prod` → (`TOXICITY`, `prod`); no `@` → active version."""
    base, sep, ref = name.partition("@")
    if not sep:
        return base, None
    return base, f"v{ref}" if _VERSION_NO.match(ref) else ref


def utf16_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Code-point spans as UTF-16 code-unit offsets: the unit v1alpha1's SpanScore states, and the one
    JavaScript clients slice strings in (a character beyond U+FFFF counts two)."""
    units, at, count = {}, 0, 0
    for offset in sorted({o for span in spans for o in span}):
        count += sum(2 if ord(ch) > 0xFFFF else 1 for ch in text[at:offset])
        units[offset], at = count, offset
    return [(units[a], units[b]) for a, b in spans]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """[begin, end) offsets (code points) of the text's sentences, surrounding whitespace excluded."""
    spans = []
    for match in _SENTENCE.finditer(text):
        piece = match.group()
        stripped = piece.strip()
        if not stripped:
            continue
        begin = match.start() + (len(piece) - len(piece.lstrip()))
        spans.append((begin, begin + len(stripped)))
        if len(spans) == MAX_SPANS:
            break
    return spans


class LanguageNotSupported(ApiError):
    """Perspective's answer to a request language an attribute does not support: 400 INVALID_ARGUMENT,
    Perspective's message, and its own error detail after the service's ErrorInfo (docs/perspective.md)."""

    def __init__(self, attribute: str, languages: list[str]) -> None:
        super().__init__(
            400,
            "language_not_supported_by_attribute",
            f"Attribute {attribute} does not support request languages: {', '.join(languages)}",
            details=[
                {
                    "@type": "type.googleapis.com/google.commentanalyzer.v1alpha1.Error",
                    "errorType": "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE",
                    "languageNotSupportedByAttributeError": {
                        "detectedLanguages": languages,
                        "attribute": attribute,
                    },
                }
            ],
        )


def check_languages(attribute: str, requested: list[str], embedder_id: str) -> None:
    """Refuse the request's languages that the embedder answering `attribute` does not read. Only the
    languages a request states are checked: langdetect's guesses on short comments are often wrong."""
    read = languages_read(embedder_id)
    if read is None:
        return
    unread = [tag for tag in requested if language_code(tag) not in read]
    if unread:
        raise LanguageNotSupported(attribute, unread)


# The service's statuses on this surface, as Google's canonical codes (google.rpc.Code) with the HTTP
# status Google maps each to. A state conflict (e.g. `no_active_version`) is FAILED_PRECONDITION (400);
# a retryable one (`model_busy`) is ABORTED (409).
_CANONICAL = {
    400: (400, "INVALID_ARGUMENT"),
    401: (401, "UNAUTHENTICATED"),
    403: (403, "PERMISSION_DENIED"),
    404: (404, "NOT_FOUND"),
    409: (400, "FAILED_PRECONDITION"),
    413: (400, "INVALID_ARGUMENT"),
    415: (400, "INVALID_ARGUMENT"),
    422: (400, "INVALID_ARGUMENT"),
    429: (429, "RESOURCE_EXHAUSTED"),
    503: (503, "UNAVAILABLE"),
}


# Key problems as Google's API front end answers them (error_reason.proto's ErrorInfo reasons, domain
# googleapis.com; docs/perspective.md): a missing key is PERMISSION_DENIED / CREDENTIALS_MISSING, a key
# that is malformed, unknown or revoked is INVALID_ARGUMENT / API_KEY_INVALID. No `WWW-Authenticate`
# header: Google sends none with these, and httplib2 cannot parse a bare `Bearer` challenge.
_KEY_ERRORS = {
    True: (
        403,
        "PERMISSION_DENIED",
        "CREDENTIALS_MISSING",
        "Method doesn't allow unregistered callers (callers without established identity). "
        "Please use API Key or other form of API consumer identity to call this API.",
    ),
    False: (400, "INVALID_ARGUMENT", "API_KEY_INVALID", "API key not valid. Please pass a valid API key."),
}


def key_error(request_id: str, *, missing: bool) -> JSONResponse:
    """The answer to a request without a key (`missing`) or with a key that is not valid."""
    http, canonical, reason, message = _KEY_ERRORS[missing]
    body = {
        "error": {
            "code": http,
            "message": echoable(message),  # it may name a field the client sent, NUL and all
            "status": canonical,
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "googleapis.com",
                    "metadata": {"service": "commentanalyzer.googleapis.com", "request_id": request_id},
                }
            ],
        }
    }
    return JSONResponse(body, status_code=http, headers={REQUEST_ID_HEADER: request_id})


def google_error(
    request_id: str,
    status: int,
    reason: str,
    message: str,
    *,
    retryable: bool = False,
    headers: dict[str, str],
    extra: list[JsonObject] | None = None,
) -> JSONResponse:
    """The error in Google's shape; the service's own code travels as `details[0].reason` (ErrorInfo), and
    `extra` details (Perspective's own) follow it."""
    http, canonical = _CANONICAL.get(status, (500, "INTERNAL"))
    if status == 409 and retryable:
        http, canonical = 409, "ABORTED"
    body = {
        "error": {
            "code": http,
            "message": echoable(message),  # it may name a field the client sent, NUL and all
            "status": canonical,
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "scoring-workbench",
                    "metadata": {"request_id": request_id},
                },
                *(extra or []),
            ],
        }
    }
    return JSONResponse(body, status_code=http, headers={**headers, REQUEST_ID_HEADER: request_id})
