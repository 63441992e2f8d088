"""Which failures of a call to the service may pass by themselves: a page offers to try again (and the
Label page tries again by itself) after these, never after a refusal that the same call would meet again."""

from __future__ import annotations

from core.client.errors import ApiError, TransportError


def worth_retrying(exc: BaseException) -> bool:
    """The service unreachable or slow, busy, or failing (5xx): the same call may succeed in a moment."""
    if isinstance(exc, ApiError):
        return exc.retryable or exc.status >= 500 or exc.status == 429
    return isinstance(exc, TransportError | TimeoutError | ConnectionError)
