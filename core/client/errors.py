"""One exception tree for everything the client raises.

`ApiError` subclasses map HTTP statuses; they carry the service's error envelope
(`{"error": {code, message, request_id, retryable, details}}`) when there is one and
fall back to whatever the body says when there is not (a proxy's HTML page, a
framework's `{"detail": ...}`), so a remote deployment never produces a parse error
instead of the real one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.contract import STATUS_ERROR_CODES

if TYPE_CHECKING:
    import httpx

    from core.client.models import ImportReport, LastOperation, Model


class ScoringClientError(Exception):
    """Base class of every error raised by `core.client`."""


# Routes a service message may name, and the client call that does the same (the handle's group kept).
_ROUTE_CALLS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b{method} /(?:v1/)?models/(?P<h>[^/\s)]+){tail}(?![\w/-])"), call)
    for method, tail, call in (
        ("POST", "/reopen", "client.reopen({h})"),
        ("POST", "/train", "client.train({h})"),
        ("POST", "/pool", "client.import_pool({h}, texts)"),
        ("POST", "/samples", "client.import_samples({h}, rows)"),
        ("POST", "/traits", "client.add_traits({h}, traits)"),
        ("POST", "/traits/discover", "client.discover({h})"),
        ("POST", "/synthesize", "client.synthesize({h})"),
        ("POST", "/evaluation-set", "client.add_evaluation_items({h}, rows)"),
        ("PATCH", "", "client.update_model({h}, ...)"),
        ("DELETE", "", "client.delete_model({h})"),
        ("GET", "", "client.get_model({h})"),
    )
)


def client_words(message: str) -> str:
    """`message` with each HTTP route it names (`POST /v1/models/local.x/reopen`) said as the client call that
    does it (`client.reopen('local.x')`)."""

    def said(call: str) -> Callable[[re.Match[str]], str]:
        def as_call(match: re.Match[str]) -> str:
            handle = match.group("h")  # a placeholder ({handle}) stays a name, a real handle is quoted
            return call.format(h="handle" if handle.startswith("{") else repr(handle))

        return as_call

    for pattern, call in _ROUTE_CALLS:
        message = pattern.sub(said(call), message)
    return message


class ApiError(ScoringClientError):
    """The service answered with an error status."""

    #: What the client adds to the service's message for the call that met it (what to do next).
    hint: str | None = None

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        request_id: str | None = None,
        retryable: bool = False,
        details: list[Any] | None = None,  # Any: the envelope's details, as JSON as the service sent them
        run_id: str | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retryable = retryable
        self.details = details or []
        self.run_id = run_id
        super().__init__(str(self))

    def __str__(self) -> str:
        # `.message` is the service's envelope as sent (the workbench shows it); what a notebook prints names
        # the client's call where the service names an HTTP route.
        text = f"{self.status} {self.code}: {client_words(self.message)}"
        if self.hint:
            text += f" {self.hint}"
        if self.run_id:
            text += f" (run {self.run_id})"
        if self.request_id:
            text += f" [request {self.request_id}]"
        return text

    def __reduce__(self) -> tuple[object, ...]:  # keeps keyword-only fields through pickling
        return (_rebuild, (type(self), self.__dict__.copy()))


def _rebuild(cls: type[ApiError], state: dict[str, object]) -> ApiError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    Exception.__init__(err, str(err))
    return err


class BadRequestError(ApiError):
    """400, e.g. `invalid_cursor`."""


class AuthenticationError(ApiError):
    """401: no key, malformed header, unknown or revoked key (Perspective paths: Google's 400 / 403)."""


class PermissionDeniedError(ApiError):
    """403: wrong scope, or a namespace the key does not own."""


class NotFoundError(ApiError):
    """404: the model (or trait, version, tag) does not exist or is not readable with this key."""


class ConflictError(ApiError):
    """409: the model's state forbids the call; `run_id` names the run in the way, if any."""


class ValidationError(ApiError):
    """422: the request was understood but its content is invalid; `details` lists each problem."""


class RateLimitError(ApiError):
    """429 after the client's retries ran out."""


class ServerError(ApiError):
    """5xx after the client's retries ran out (or at once, where a retry would not be safe)."""


class StorageFullError(ServerError):
    """507 `storage_full`: the service's disk is full and nothing was stored; retry once space is freed."""


class UnexpectedRedirectError(ApiError):
    """The service answered 3xx: the client follows no redirect, and a redirect is never a result."""


class TransportError(ScoringClientError):
    """The service could not be reached (connection refused, timeout, reset) after retries."""

    def __init__(self, message: str, *, request_id: str | None = None) -> None:
        self.request_id = request_id
        super().__init__(message)


class ClientClosedError(ScoringClientError):
    """A call on a `Client` after its `close()` (or the end of its `with` block): make a new client."""


class RunFailedError(ScoringClientError):
    """A background run (train, discover, synthesize, retrain) ended with status `failed`."""

    def __init__(self, model: Model, operation: LastOperation) -> None:
        self.model = model
        self.operation = operation
        self.run_id = operation.run_id
        self.code = operation.error_code
        self.message = operation.error_message
        super().__init__(
            f"{operation.kind or 'run'} {operation.run_id or ''} on {model.handle} failed: "
            f"{self.code or 'error'}: {self.message or 'no message'}"
        )


class RunCancelledError(RunFailedError):
    """A background run ended with status `cancelled` (`Client.cancel`): its model is back where it was."""

    def __init__(self, model: Model, operation: LastOperation) -> None:
        super().__init__(model, operation)
        self.code = "cancelled"
        self.message = operation.progress_message
        self.args = (
            f"{operation.kind or 'run'} {operation.run_id or ''} on {model.handle} was cancelled "
            f"(the model is {model.state})",
        )


class ImportRowsError(ScoringClientError, ValueError):
    """`import_samples` (strict, the default) met rows it could not store: `report` is the `ImportReport`
    (each refused row with its index and why). Rows refused here stop the import before anything is sent;
    rows the service refused leave the rest of the import stored (`report.stored`). `strict=False` answers
    the report instead of raising."""

    def __init__(self, handle: str, report: ImportReport, *, sent: bool) -> None:
        self.handle = handle
        self.report = report
        first = report.errors[0]
        done = (
            f"{report.stored} stored, {len(report.duplicates)} already there" if sent else "nothing was sent"
        )
        super().__init__(
            f"{len(report.errors)} of {report.total} rows cannot be stored in {handle} ({done}); first, "
            f"row {first.index}: {first.message}. err.report lists every row and why; fix them and import "
            "again (a stored row is never stored twice), or pass strict=False to store the rest and get "
            "the report"
        )


class WaitTimeoutError(ScoringClientError, TimeoutError):
    """`Client.wait` gave up; `model` is the last state seen."""

    def __init__(self, handle: str, run_id: str | None, timeout: float, model: Model | None) -> None:
        self.handle = handle
        self.run_id = run_id
        self.timeout = timeout
        self.model = model
        state = model.state if model is not None else "unknown"
        super().__init__(f"{handle}: run {run_id or '(any)'} still going after {timeout:g}s (state {state})")


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
    507: StorageFullError,
}


# ErrorInfo reasons of a missing or invalid API key in Google's shape (the Perspective surface).
_GOOGLE_KEY_REASONS = frozenset({"CREDENTIALS_MISSING", "API_KEY_INVALID"})


def error_class(status: int) -> type[ApiError]:
    if status >= 500:
        return _BY_STATUS.get(status, ServerError)
    if 300 <= status < 400:
        return UnexpectedRedirectError
    return _BY_STATUS.get(status, ApiError)


def error_from_response(response: httpx.Response, request_id: str | None = None) -> ApiError:
    """Build the matching `ApiError` from any error response, envelope or not."""
    status = response.status_code
    code = STATUS_ERROR_CODES.get(status, "internal_error" if status >= 500 else f"http_{status}")
    message = response.reason_phrase or f"HTTP {status}"
    retryable = status == 429 or status >= 500
    details: list[Any] = []  # Any: as the envelope's JSON holds them
    rid = response.headers.get("x-request-id") or request_id
    cls = error_class(status)

    body: Any = None  # Any: the answer's JSON, whatever an error answer holds
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        text = response.text.strip()
        if text:
            message = text[:500]

    if isinstance(body, dict):
        envelope = body.get("error")
        if isinstance(envelope, dict) and isinstance(envelope.get("code"), int):
            # Google's error shape (the Perspective-compatible surface): the service's code is the reason.
            reasons = [d.get("reason") for d in envelope.get("details") or [] if isinstance(d, dict)]
            code = str(reasons[0] if reasons and reasons[0] else envelope.get("status") or code)
            message = str(envelope.get("message") or message)
            details = list(envelope.get("details") or [])
            if code in _GOOGLE_KEY_REASONS:  # Google answers key problems 400 / 403: still a key problem
                cls = AuthenticationError
        elif isinstance(envelope, dict):
            code = str(envelope.get("code") or code)
            message = str(envelope.get("message") or message)
            rid = envelope.get("request_id") or rid
            if isinstance(envelope.get("retryable"), bool):
                retryable = envelope["retryable"]
            if isinstance(envelope.get("details"), list):
                details = envelope["details"]
        elif "detail" in body:  # FastAPI/Starlette default shape
            detail = body["detail"]
            if isinstance(detail, list):
                details = detail
                message = "; ".join(_detail_text(d) for d in detail) or message
            else:
                message = str(detail)
        elif isinstance(envelope, str):
            message = envelope
            code = str(body.get("code") or code)
        elif "message" in body:
            message = str(body["message"])
            code = str(body.get("code") or code)

    if 300 <= status < 400:  # an empty path segment, or a base URL that moved: never a result
        code = "unexpected_redirect"
        where = response.headers.get("location")
        request = response.request
        message = (
            f"The service answered {status} {response.reason_phrase or 'redirect'} to "
            f"{request.method} {request.url.path}"
            + (f" (pointing at {where})" if where else "")
            + " instead of a result: check the service URL and that no name in the request is empty."
        )
    return cls(
        status,
        code,
        message,
        request_id=rid,
        retryable=retryable,
        details=details,
        run_id=response.headers.get("x-run-id"),
    )


def _detail_text(detail: object) -> str:
    if isinstance(detail, dict):
        loc = ".".join(str(p) for p in detail.get("loc", []))
        return f"{loc}: {detail.get('msg', '')}" if loc else str(detail.get("msg", detail))
    return str(detail)
