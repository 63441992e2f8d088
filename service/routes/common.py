"""Shared OpenAPI declarations for routes."""

from __future__ import annotations

from typing import Any

from service.errors import ErrorEnvelope

_ERR = {"model": ErrorEnvelope}
_DESCRIPTIONS = {
    400: "Bad request (e.g. an invalid cursor)",
    401: "Missing or invalid API key",
    403: "The key's scope or namespace does not permit this",
    404: "Not found (or not readable with this key)",
    409: "Conflict with the model's state",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Validation error",
    500: "Internal error",
    503: "The embedder or model file this version needs is not available here",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """Error responses (always 401, 413, 422 and 500) in the one envelope."""
    wanted = sorted({401, 413, 422, 500, *codes})
    return {c: {**_ERR, "description": _DESCRIPTIONS[c]} for c in wanted}


RUN_ID_HEADER = {"X-Run-Id": {"description": "The run the conflict refers to", "schema": {"type": "string"}}}
