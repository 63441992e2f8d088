"""Which failures are retried, and how long the client waits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from core.client.retry import (
    Safety,
    backoff_delay,
    retry_after_seconds,
    should_retry_exception,
    should_retry_status,
)


@pytest.mark.parametrize(
    ("status", "safety", "expected"),
    [
        (429, Safety.ONCE, True),
        (429, Safety.IDEMPOTENT, True),
        (500, Safety.IDEMPOTENT, True),
        (503, Safety.IDEMPOTENT, True),
        (500, Safety.ONCE, False),
        (503, Safety.ONCE, False),
        (409, Safety.IDEMPOTENT, False),
        (422, Safety.IDEMPOTENT, False),
        (404, Safety.IDEMPOTENT, False),
    ],
)
def test_status_matrix(status: int, safety: Safety, expected: bool) -> None:
    assert should_retry_status(status, safety) is expected


def test_a_429_the_service_calls_final_is_not_retried() -> None:
    """A quota is no rate: `quota_exceeded` (retryable false) is raised at once; `rate_limited` and a
    proxy's 429 without an envelope are retried."""

    def answer(body: object) -> httpx.Response:
        return httpx.Response(429, json=body, request=httpx.Request("POST", "http://x/v1/models/a.b/samples"))

    quota = {"error": {"code": "quota_exceeded", "retryable": False, "message": "", "details": []}}
    rate = {"error": {"code": "rate_limited", "retryable": True, "message": "", "details": []}}
    assert should_retry_status(429, Safety.ONCE, answer(quota)) is False
    assert should_retry_status(429, Safety.ONCE, answer(rate)) is True
    assert should_retry_status(429, Safety.ONCE, answer("Too Many Requests")) is True


def test_exception_matrix() -> None:
    request = httpx.Request("POST", "http://x/v1/models")
    refused = httpx.ConnectError("refused", request=request)
    lost = httpx.ReadTimeout("lost", request=request)
    assert should_retry_exception(refused, Safety.ONCE)
    assert should_retry_exception(lost, Safety.IDEMPOTENT)
    assert not should_retry_exception(lost, Safety.ONCE)


def test_backoff_grows_with_jitter_inside_bounds() -> None:
    for attempt in range(5):
        ceiling = 0.5 * 2**attempt
        delays = {backoff_delay(attempt, 0.5) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1  # jittered


def test_retry_after_forms() -> None:
    assert retry_after_seconds(httpx.Response(429, headers={"Retry-After": "3"})) == 3.0
    assert retry_after_seconds(httpx.Response(429)) is None
    assert retry_after_seconds(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    seconds = retry_after_seconds(httpx.Response(503, headers={"Retry-After": later}))
    assert seconds is not None and 25 <= seconds <= 31
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(httpx.Response(503, headers={"Retry-After": past})) == 0.0
