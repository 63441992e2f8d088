"""What every request passes before the app reads a byte of its body: the key, the body limit, NUL bytes.

Pure ASGI, so nothing is buffered: a request without a valid key is answered 401 before its body is read,
and a body is counted while it streams in (with or without Content-Length) and refused with 413 as soon as
it passes the limit, so no request can make the server hold more than the limit.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.security.utils import get_authorization_scheme_param
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import MAX_BODY_BYTES, ApiError, envelope
from service.http.api_docs import ASSETS_PATH, DOCS_PATH
from service.http.refusals import early_refusal, record_refusal, routed_scope
from service.http.tokens import CHALLENGE, NO_KEY, identify, memberless
from service.store.api_keys import Principal

PREFIX = "/v1/"
# Everything under /v1 needs a key except these and the docs page's own assets.
OPEN_PATHS = frozenset({"/v1/health", "/v1/openapi.json", DOCS_PATH})


class BodyTooLarge(StarletteHTTPException):
    """Raised from `receive` once the body passes the limit; rendered as 413 `payload_too_large`."""

    def __init__(self) -> None:
        super().__init__(413, f"The request body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB.")


def needs_key(scope: Scope) -> bool:
    """A request that reaches a route under /v1 (not an open one). A path or method no route serves is
    left to the router: 404 and 405 (with `Allow`) need no key and read no body."""
    path = scope["path"]
    if not path.startswith(PREFIX) or path in OPEN_PATHS or path.startswith(f"{ASSETS_PATH}/"):
        return False
    return any(route.matches(scope)[0] == Match.FULL for route in scope["app"].router.routes)


def _lookup(scope: Scope, credential: str) -> Principal:
    """The key's or the signed-in person's principal (service.http.tokens); ApiError otherwise."""
    state = scope["app"].state
    client = scope.get("client")
    return identify(state.ctx, getattr(state, "oidc", None), credential, client[0] if client else "")


def _nul_parameter(scope: Scope) -> list[str | int] | None:
    """Where a NUL byte sits in the path or the query, if anywhere (no database stores one as text)."""
    if "\x00" in scope.get("path", ""):
        return ["path"]
    query = scope.get("query_string", b"").decode("latin-1")
    if "%00" in query or "\x00" in query:
        for name, value in parse_qsl(query, keep_blank_values=True):
            if "\x00" in name or "\x00" in value:
                return ["query", name.replace("\x00", "")]
    return None


class GuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id: str = scope["state"]["request_id"]  # set by RequestIdMiddleware, which wraps this one
        if needs_key(scope):
            header = ""
            for name, value in scope.get("headers", []):
                if name == b"authorization":
                    header = value.decode("latin-1")
                    break
            scheme, credentials = get_authorization_scheme_param(header)
            credentials = credentials.strip()
            try:
                if scheme.lower() != "bearer" or not credentials:
                    raise ApiError(401, "unauthorized", NO_KEY, headers=CHALLENGE)
                who = await run_in_threadpool(_lookup, scope, credentials)
            except ApiError as exc:
                response = envelope(
                    request_id,
                    exc.status,
                    exc.code,
                    exc.message,
                    retryable=exc.retryable,
                    headers=exc.headers,
                )
                await response(scope, receive, send)
                return
            scope["state"]["principal"] = who  # request.state.principal: the routes authenticate no further
            # A person in no namespace (audited like any refusal: the operator reads it), or a write the
            # caller's role may not do whatever the body says: 403 before the body's size (413).
            refusal = memberless(who, scope["path"])
            refused = (refusal, routed_scope(scope)) if refusal is not None else early_refusal(scope, who)
            if refused is not None:
                refusal, routed = refused
                await run_in_threadpool(record_refusal, Request(routed), refusal)
                response = envelope(request_id, refusal.status, refusal.code, refusal.message)
                await response(scope, receive, send)
                return
        where = _nul_parameter(scope)
        if where is not None:
            details = [{"loc": where, "msg": "must not contain NUL characters", "type": "invalid_character"}]
            message = f"{'.'.join(map(str, where))}: must not contain NUL characters."
            response = envelope(request_id, 422, "validation_error", message, details=details)
            await response(scope, receive, send)
            return

        # A declared length over the limit is refused before a byte is read, but only after the key: a
        # caller without one learns nothing more than 401 (docs/api.md, Authentication).
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            response = envelope(request_id, 413, "payload_too_large", "The request body is too large.")
            await response(scope, receive, send)
            return

        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > MAX_BODY_BYTES:
                    raise BodyTooLarge()
            return message

        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except BodyTooLarge as exc:  # raised where no exception handler saw it
            if started:
                raise
            response = envelope(request_id, 413, "payload_too_large", str(exc.detail))
            await response(scope, receive, send)
