"""One error envelope for every error, plus the request-id middleware that stamps every response."""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.contract import STATUS_ERROR_CODES
from core.embedders.cache import is_disk_full
from core.engine.errors import EmbedderUnavailableError, EngineError, ModelFileError
from core.json_types import JsonObject

log = logging.getLogger("service")

REQUEST_ID_HEADER = "X-Request-Id"
_CLIENT_ID = re.compile(r"\A[\x21-\x7e]{1,128}\Z")
MAX_BODY_BYTES = 16 * 1024 * 1024

# Pydantic error types that are already one of our codes (raised as PydanticCustomError by validators).
_CUSTOM_VALIDATION_CODES = {
    "unknown_field",
    "immutable_field",
    "state_not_patchable",
    "invalid_tag",
    "empty_text",
    "text_too_long",
    "invalid_quality",
    "invalid_metadata",
    "invalid_metadata_filter",
}


class ErrorDetail(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ErrorBody(BaseModel):
    code: str
    message: str
    request_id: str
    retryable: bool
    details: list[ErrorDetail] = []


class ErrorEnvelope(BaseModel):
    error: ErrorBody


class ApiError(Exception):
    """Raised anywhere in a request; rendered as the envelope."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        headers: dict[str, str] | None = None,
        details: list[JsonObject] | None = None,
        namespace: str | None = None,
    ) -> None:
        super().__init__(message)
        #: The namespace a refusal (403) concerns, when the path does not name it: its audit event's log.
        self.namespace = namespace
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable
        self.headers = headers or {}
        self.details = details or []


def request_id_of(request: Request) -> str:
    return getattr(request.state, "request_id", None) or _mint()


def _mint() -> str:
    return f"req_{secrets.token_hex(16)}"


def envelope(
    request_id: str,
    status: int,
    code: str,
    message: str,
    *,
    retryable: bool = False,
    details: list[JsonObject] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {
        "error": {
            "code": code,
            "message": echoable(message),
            "request_id": request_id,
            "retryable": retryable,
            "details": details or [],
        }
    }
    hdrs = {**(headers or {}), REQUEST_ID_HEADER: request_id}
    return JSONResponse(body, status_code=status, headers=hdrs)


# A NUL or lone surrogate the client sent (e.g. as an unknown field's name) is echoed as U+FFFD: the envelope
# promises NUL-free strings, and no UTF-8 encoder can write a lone surrogate.
_UNECHOABLE_RE = re.compile("[\x00\ud800-\udfff]")


def echoable(text: str) -> str:
    return _UNECHOABLE_RE.sub("\ufffd", text)


def _jsonable_details(errors: list[Any]) -> list[JsonObject]:  # Any: FastAPI types its errors so
    out = []
    for err in errors:
        loc = [p if isinstance(p, int) else echoable(str(p)) for p in err.get("loc", ())]
        out.append({"loc": loc, "msg": echoable(str(err.get("msg", ""))), "type": str(err.get("type", ""))})
    return out


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return envelope(
            request_id_of(request),
            exc.status,
            exc.code,
            exc.message,
            retryable=exc.retryable,
            details=exc.details,
            headers=exc.headers,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == "There was an error parsing the body":
            # FastAPI's undecodable-body error: a validation problem like any malformed JSON.
            return envelope(request_id_of(request), 422, "validation_error", "The body is not valid JSON.")
        code = STATUS_ERROR_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404 and message == "Not Found":
            message = f"No route {request.method} {request.url.path}"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            message = f"Method {request.method} is not allowed on {request.url.path}"
            # Starlette names the methods of the first route whose path matched; a path served by
            # several routes (GET and POST /models) allows the union.
            headers["Allow"] = ", ".join(allowed_methods(request))
        return envelope(
            request_id_of(request),
            exc.status_code,
            code,
            message,
            retryable=exc.status_code in (429, 503),
            headers=headers,
        )

    @app.exception_handler(OperationalError)
    async def _database_busy(request: Request, exc: OperationalError) -> JSONResponse:
        if is_storage_full(exc):
            return storage_full_response(request_id_of(request), request.method, request.url.path)
        if not is_lock_timeout(exc):
            raise exc
        log.warning("database busy in %s %s: %s", request.method, request.url.path, type(exc.orig).__name__)
        return busy_response(request_id_of(request))

    @app.exception_handler(EngineError)
    async def _engine_error(request: Request, exc: EngineError) -> JSONResponse:
        # Bad input the engine caught (422), or an embedder/model file this process cannot load (503).
        unavailable = isinstance(exc, EmbedderUnavailableError | ModelFileError)
        status = 503 if unavailable else 422
        return envelope(request_id_of(request), status, exc.code, str(exc), retryable=False)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = _jsonable_details(list(exc.errors()))
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type and not _is_json(media_type) and any(d["loc"] == ["body"] for d in details):
            # FastAPI reads a non-JSON body as bytes and reports a shapeless body; say what is wrong instead.
            return envelope(
                request_id_of(request),
                415,
                "unsupported_media_type",
                f"Send the body as application/json, not {media_type}.",
            )
        code = "validation_error"
        types = [d["type"] for d in details]
        for t in types:
            if t in _CUSTOM_VALIDATION_CODES:
                code = t
                break
        else:
            if types and all(t == "extra_forbidden" for t in types):
                code = "unknown_field"
        if details:
            first = details[0]
            where = ".".join(str(p) for p in first["loc"])
            message = f"{where}: {first['msg']}" if where else first["msg"]
        else:
            message = "The request is not valid."
        return envelope(request_id_of(request), 422, code, message, details=details)


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


def allowed_methods(request: Request) -> list[str]:
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


# SQLite's "database is locked" / "database table is locked" once busy_timeout has passed; PostgreSQL's
# lock_not_available, deadlock_detected and serialization_failure.
_LOCK_MESSAGES = ("database is locked", "database table is locked")
_LOCK_SQLSTATES = ("55P03", "40P01", "40001")
RETRY_AFTER_S = 1


def is_lock_timeout(exc: BaseException) -> bool:
    if not isinstance(exc, OperationalError):
        return False
    orig = exc.orig
    if getattr(orig, "pgcode", None) in _LOCK_SQLSTATES or getattr(orig, "sqlstate", None) in _LOCK_SQLSTATES:
        return True
    return any(m in str(orig) for m in _LOCK_MESSAGES)


def busy_response(request_id: str) -> JSONResponse:
    return envelope(
        request_id,
        503,
        "database_busy",
        "The database is busy with other writes; retry shortly.",
        retryable=True,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


# PostgreSQL's disk_full; SQLite's SQLITE_FULL and a file system's ENOSPC are core's is_disk_full.
_DISK_FULL_SQLSTATE = "53100"


def is_storage_full(exc: BaseException) -> bool:
    """The database, the queue or a file in the data directory ran out of disk (wrapped or not)."""
    for err in (exc, getattr(exc, "orig", None), exc.__cause__):
        if err is None:
            continue
        if _DISK_FULL_SQLSTATE in (getattr(err, "pgcode", None), getattr(err, "sqlstate", None)):
            return True
        if is_disk_full(err):
            return True
    return False


def storage_full_response(request_id: str, method: object, path: object) -> JSONResponse:
    log.error("storage full in %s %s (request %s)", method, path, request_id)
    return envelope(
        request_id,
        507,
        "storage_full",
        "The service's storage is full, so nothing of this request was stored. Free space on the volume of "
        "the data directory or the database (old backups, logs; embeddings.sqlite in the data directory "
        "is a cache that can be deleted) and retry.",
        retryable=True,  # no Retry-After: space comes back when someone frees it, not after a set time
    )


class RequestIdMiddleware:
    """Echo or mint X-Request-Id on every response; render uncaught exceptions as a 500 envelope.

    Pure ASGI (not BaseHTTPMiddleware) so it also wraps errors and streaming without buffering.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        supplied = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                supplied = value.decode("latin-1")
                break
        request_id = supplied if supplied and _CLIENT_ID.match(supplied) else _mint()
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except OperationalError as exc:
            if not started and is_storage_full(exc):
                response = storage_full_response(request_id, scope.get("method"), scope.get("path"))
            elif started or not is_lock_timeout(exc):
                log.error(
                    "Database error in %s %s (request %s): %s",
                    scope.get("method"),
                    scope.get("path"),
                    request_id,
                    type(exc.orig).__name__,
                )
                if started:
                    raise
                response = envelope(request_id, 500, "internal_error", "An internal error occurred.")
            else:
                response = busy_response(request_id)
            await response(scope, receive, send_with_id)
        except ClientDisconnect:
            # The client left before its request was read (a notebook interrupted, a timeout): no one to
            # answer, nothing wrong with the service.
            log.info(
                "client left %s %s before it was answered (request %s)",
                scope.get("method"),
                scope.get("path"),
                request_id,
            )
        except Exception as exc:
            if not started and is_storage_full(exc):  # the queue's own SQLite file, or a file write
                response = storage_full_response(request_id, scope.get("method"), scope.get("path"))
                await response(scope, receive, send_with_id)
                return
            log.exception(
                "Unhandled error in %s %s (request %s)", scope.get("method"), scope.get("path"), request_id
            )
            if started:
                raise
            response = envelope(request_id, 500, "internal_error", "An internal error occurred.")
            await response(scope, receive, send_with_id)
