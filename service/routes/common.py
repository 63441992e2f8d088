"""Shared OpenAPI declarations for routes."""

from __future__ import annotations

from core.json_types import JsonObject
from service.errors import ErrorEnvelope

_ERR = {"model": ErrorEnvelope}
_DESCRIPTIONS = {
    400: "Bad request (e.g. an invalid cursor)",
    401: "Missing or invalid API key",
    403: "The key's scope or namespace does not permit this",
    404: "Not found (or not readable with this key)",
    409: "Conflict with the model's state",
    413: "Payload too large",
    415: "Unsupported media type (a body sent as anything but application/json)",
    422: "Validation error",
    429: "Rate limited (`rate_limited`): this caller's heavy requests are at their bound while others have "
    "theirs in flight; retry after `Retry-After` seconds",
    500: "Internal error",
    503: "The embedder or model file this version needs is not available here, or the database is busy "
    "(`database_busy`: retry after `Retry-After`)",
}


def errors(*codes: int) -> dict[int | str, JsonObject]:
    """Error responses (always 401, 413, 415, 422, 500 and 503) in the one envelope."""
    wanted = sorted({401, 413, 415, 422, 500, 503, *codes})
    return {c: {**_ERR, "description": _DESCRIPTIONS[c]} for c in wanted}


RUN_ID_HEADER = {"X-Run-Id": {"description": "The run the conflict refers to", "schema": {"type": "string"}}}
