"""When a failed request may be sent again, and how long to wait first."""

from __future__ import annotations

import email.utils
import enum
import random
import time
from datetime import UTC, datetime

import httpx

#: A `Retry-After` longer than this is not waited for inside a call: the error is raised instead.
MAX_RETRY_AFTER = 60.0

# Failures that happen before a single byte of the request reaches the server: always safe to repeat.
NOT_SENT_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)


class Safety(enum.Enum):
    """How safe it is to send a request again after it may have reached the server."""

    IDEMPOTENT = "idempotent"  # reads, PATCH/DELETE, tags, score, compare, train: repeat freely
    ONCE = "once"  # creates and run starts: repeat only if it provably never arrived


def should_retry_status(status: int, safety: Safety, response: httpx.Response | None = None) -> bool:
    if response is not None and said_final(response):  # e.g. 429 `quota_exceeded`: waiting changes nothing
        return False
    if status == 429:  # rejected before processing: safe for every request
        return True
    return status >= 500 and safety is Safety.IDEMPOTENT


def said_final(response: httpx.Response) -> bool:
    """Whether the service's error envelope says `retryable: false` (a proxy's page says nothing)."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and error.get("retryable") is False and response.status_code == 429


def should_retry_exception(exc: httpx.TransportError, safety: Safety) -> bool:
    return isinstance(exc, NOT_SENT_ERRORS) or safety is Safety.IDEMPOTENT


def backoff_delay(attempt: int, backoff: float) -> float:
    """Exponential backoff with jitter: in [b*2^n / 2, b*2^n] for the n-th retry (0-based)."""
    ceiling = backoff * (2**attempt)
    return random.uniform(ceiling / 2, ceiling)


def retry_after_seconds(response: httpx.Response) -> float | None:
    """`Retry-After` as seconds (delta-seconds or an HTTP date), or None when absent/garbled."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def sleep(seconds: float) -> None:
    if seconds > 0:
        time.sleep(seconds)
