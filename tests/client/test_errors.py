"""Error mapping from any error response, with or without the service's envelope."""

from __future__ import annotations

import pickle

import httpx
import pytest

from core.client import errors


def _response(status: int, *, json: object = None, text: str | None = None, headers: dict | None = None):
    if json is not None:
        return httpx.Response(status, json=json, headers=headers)
    return httpx.Response(status, text=text or "", headers=headers)


def test_envelope_fields_and_run_id_header() -> None:
    body = {
        "error": {
            "code": "duplicate_run",
            "message": "the same discovery already ran",
            "request_id": "req_abc",
            "retryable": False,
            "details": [],
        }
    }
    err = errors.error_from_response(_response(409, json=body, headers={"X-Run-Id": "run_123"}))
    assert type(err) is errors.ConflictError
    assert (err.status, err.code, err.request_id, err.run_id, err.retryable) == (
        409,
        "duplicate_run",
        "req_abc",
        "run_123",
        False,
    )
    assert "run_123" in str(err) and "duplicate_run" in str(err)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.BadRequestError),
        (401, errors.AuthenticationError),
        (403, errors.PermissionDeniedError),
        (404, errors.NotFoundError),
        (405, errors.ApiError),
        (409, errors.ConflictError),
        (422, errors.ValidationError),
        (429, errors.RateLimitError),
        (500, errors.ServerError),
        (503, errors.ServerError),
        (507, errors.StorageFullError),
    ],
)
def test_status_picks_the_class(status: int, cls: type[errors.ApiError]) -> None:
    err = errors.error_from_response(_response(status, text=""))
    assert type(err) is cls
    assert isinstance(err, errors.ApiError) and isinstance(err, errors.ScoringClientError)
    assert err.status == status


def test_storage_full_is_a_retryable_server_error() -> None:
    body = {"error": {"code": "storage_full", "message": "free space", "request_id": "r", "retryable": True}}
    err = errors.error_from_response(_response(507, json=body))
    assert isinstance(err, errors.StorageFullError) and isinstance(err, errors.ServerError)
    assert (err.code, err.retryable) == ("storage_full", True)
    assert errors.error_from_response(_response(507, text="Insufficient Storage")).code == "storage_full"


def test_framework_detail_list_becomes_details() -> None:
    body = {"detail": [{"loc": ["body", "samples", 2, "quality"], "msg": "too big", "type": "less_than"}]}
    err = errors.error_from_response(_response(422, json=body, headers={"X-Request-Id": "req_h"}))
    assert isinstance(err, errors.ValidationError)
    assert err.code == "validation_error"
    assert err.details[0]["loc"][2] == 2
    assert "body.samples.2.quality: too big" in err.message
    assert err.request_id == "req_h"


def test_html_gateway_page_is_kept_as_message() -> None:
    err = errors.error_from_response(_response(502, text="<html>Bad Gateway</html>"), request_id="req_mine")
    assert isinstance(err, errors.ServerError)
    assert err.code == "internal_error" and err.retryable
    assert "Bad Gateway" in err.message
    assert err.request_id == "req_mine"  # the id we sent, when the proxy echoes none


def test_plain_message_body_and_empty_body() -> None:
    err = errors.error_from_response(_response(403, json={"message": "nope", "code": "scope"}))
    assert (err.code, err.message) == ("scope", "nope")
    err = errors.error_from_response(_response(401))
    assert err.code == "unauthorized" and err.message == "Unauthorized"


def test_api_error_survives_pickling() -> None:
    err = errors.ConflictError(409, "model_busy", "busy", request_id="req_1", retryable=True, run_id="run_9")
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is errors.ConflictError
    assert (copy.code, copy.run_id, copy.retryable, str(copy)) == ("model_busy", "run_9", True, str(err))


def test_a_body_without_envelope_gets_the_service_s_code_for_its_status() -> None:
    """One table (core.contract.STATUS_ERROR_CODES) names codes for the service and the client alike."""
    err = errors.error_from_response(_response(503, text="<html>Service Unavailable</html>"))
    assert err.code == "unavailable" and err.retryable
    assert errors.error_from_response(_response(413, text="too big")).code == "payload_too_large"
