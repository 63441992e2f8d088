"""Scoring: one or many contents, optional explanation and feedback; compare; text/plain bar chart."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Annotated

import anyio.from_thread
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError

from core.contract import MAX_TEXT_CHARS, MAX_VERSION_REF_CHARS
from service.context import Context
from service.domain import scoring
from service.domain.fair_share import Busy, FairShare, Stopped
from service.errors import ApiError
from service.http import ratelimit, textplain
from service.http.auth import AnyKey, Credentials, CtxDep, principal_in
from service.http.limiter import ScoreLimiter
from service.routes.common import errors
from service.schemas.common import NOT_BLANK_PATTERN, has_unstorable
from service.schemas.score import CompareIn, CompareOut, ScoreIn, ScoreOut

router = APIRouter(tags=["scoring"])

_SCORE_ERRORS = errors(403, 404, 409, 415, 503)
_SCORE_200 = {
    "description": "Scores (JSON), or a bar chart with `Accept: text/plain`",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}


def _wants_text(request: Request) -> bool:
    accept = request.headers.get("accept", "").lower()
    return "text/plain" in accept and "application/json" not in accept.split(",")[0]


def _parse(payload: bytes, content_type: str, version: str | None, explain: bool) -> ScoreIn:
    media = content_type.split(";")[0].strip().lower()
    try:
        if media == "text/plain":
            text = payload.decode("utf-8")
            if has_unstorable(text):
                raise ApiError(
                    422,
                    "validation_error",
                    "body: must not contain NUL characters (\\u0000) or lone surrogates.",
                    details=[{"loc": ["body"], "msg": "invalid character", "type": "invalid_character"}],
                )
            return ScoreIn(content=text, version=version, explain=explain)
        if media == "application/json" or media.endswith("+json"):
            data = json.loads(payload) if payload else None
            parsed = ScoreIn.model_validate(data)
            if version and parsed.version is None:
                parsed.version = version
            if explain:
                parsed.explain = True
            return parsed
    except UnicodeDecodeError:
        raise ApiError(422, "validation_error", "The body is not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise ApiError(422, "validation_error", f"The body is not valid JSON: {exc.msg}.") from None
    except RecursionError:  # JSON nested deeper than the parser's recursion limit
        raise ApiError(422, "validation_error", "The body is not valid JSON: nested too deeply.") from None
    except ValidationError as exc:
        errs = [
            {**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False, include_context=False)
        ]
        raise RequestValidationError(errs) from None
    raise ApiError(415, "unsupported_media_type", "Send text/plain or application/json.")


@dataclass
class ScoreCall:
    handle: str
    payload: bytes
    content_type: str
    version: str | None  # query parameters, for raw bodies
    explain: bool
    as_text: bool
    identify: scoring.Identify
    limiter: ScoreLimiter | None = None  # the app's: scoring's work is charged to it once the body is read
    share: FairShare | None = None  # the app's: each piece waits for its caller's turn
    # Whether the client has gone away, and whether the process is stopping: asked between the pieces of a
    # request's scoring and before its explanation, so neither keeps the service computing for no one.
    disconnected: Callable[[], bool] = lambda: False
    stopping: Callable[[], bool] = lambda: False


def _identify(request: Request, creds: HTTPAuthorizationCredentials | None) -> scoring.Identify:
    """The key service.http.guard authenticated before the body was read, else looked up (401 if none)."""
    known = getattr(request.state, "principal", None)
    return lambda s: known if known is not None else principal_in(s, creds)


def stopping_refusal() -> ApiError:
    """What a score request hears when its process stops before its texts are scored."""
    return ApiError(
        503,
        "shutting_down",
        "The service is stopping and scored none of the texts: retry (another process answers).",
        retryable=True,
        headers={"Retry-After": "1"},
    )


def busy_refusal(busy: Busy) -> ApiError:
    """A caller whose work in flight is at its bound while others wait (never a caller alone)."""
    return ApiError(
        429,
        "rate_limited",
        f"This caller already has {busy.in_flight:,} tokens of scoring in flight (at most {busy.bound:,} "
        "while others are scoring too). Nothing was scored; retry after Retry-After seconds.",
        retryable=True,
        headers={"Retry-After": "1"},
    )


@contextmanager
def scoring_answers() -> Iterator[None]:
    """The fair share's refusals as the API's answers."""
    try:
        yield
    except Stopped:
        raise stopping_refusal() from None
    except Busy as busy:
        raise busy_refusal(busy) from None


def _still_wanted(call: ScoreCall) -> None:
    # The stop flag first: once the process stops, its event loop may no longer answer `disconnected`.
    if call.stopping():
        raise stopping_refusal()
    if call.disconnected():
        raise ApiError(499, "client_closed_request", "The client went away before its texts were scored.")


def _score_sync(ctx: Context, call: ScoreCall) -> Response:
    parse = partial(_parse, call.payload, call.content_type, call.version, call.explain)
    opened = scoring.open_request(ctx.reads, call.identify, call.handle, parse)
    if call.limiter is not None:
        refused = ratelimit.work_refusal(call.limiter, opened.who, sum(map(len, opened.texts)))
        if refused is not None:
            raise refused
    if call.stopping():
        raise stopping_refusal()
    with scoring_answers():
        scored = scoring.score(ctx, opened, partial(_still_wanted, call), call.share)
    if scored.request.payload.explain:
        _still_wanted(call)  # the explanation is the long part of a request
    if call.as_text:
        t = scored.request.target
        headers = {} if scored.buffered is None else {"X-Feedback-Buffered": str(scored.buffered)}
        return PlainTextResponse(
            textplain.render(t.handle, t.version_no, t.tags, scored.blocks), headers=headers
        )
    return JSONResponse(scoring.score_body(scored))


@router.post(
    "/models/{handle}/score",
    response_model=ScoreOut,
    responses={200: _SCORE_200, **_SCORE_ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ScoreIn"}},
                "text/plain": {
                    "schema": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_TEXT_CHARS,
                        "pattern": NOT_BLANK_PATTERN,
                    }
                },
            },
        }
    },
)
async def score(
    handle: str,
    request: Request,
    creds: Credentials,
    ctx: CtxDep,
    version: Annotated[
        str | None, Query(max_length=MAX_VERSION_REF_CHARS, description="`vN` or a tag (raw bodies)")
    ] = None,
    explain: Annotated[bool, Query(description="Per-word explanation (raw bodies)")] = False,
) -> Response:
    content_type = request.headers.get("content-type", "application/json")
    payload = await request.body()
    call = ScoreCall(
        handle,
        payload,
        content_type,
        version,
        explain,
        _wants_text(request),
        _identify(request, creds),
        request.app.state.limiter,
        request.app.state.share,
    )
    call.disconnected = lambda: anyio.from_thread.run(request.is_disconnected)
    call.stopping = request.app.state.stopping.is_set
    return await run_in_threadpool(_score_sync, ctx, call)


@router.post(
    "/models/{handle}/score/compare", response_model=CompareOut, responses=errors(403, 404, 409, 503)
)
def compare(handle: str, payload: CompareIn, who: AnyKey, ctx: CtxDep, request: Request) -> CompareOut:
    refused = ratelimit.work_refusal(request.app.state.limiter, who, len(payload.a) + len(payload.b))
    if refused is not None:
        raise refused
    with scoring_answers():
        return scoring.compare(ctx, who, handle, payload, request.app.state.share)
