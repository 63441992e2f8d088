"""Scoring: one or many contents, optional explanation and feedback; compare; text/plain bar chart."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError

from core.contract import MAX_TEXT_CHARS, MAX_VERSION_REF_CHARS
from service.context import Context
from service.domain import scoring
from service.domain.fair_share import FairShare, StillWanted
from service.errors import ApiError
from service.http import ratelimit, textplain
from service.http.auth import AnyKey, Credentials, CtxDep, principal_in
from service.http.heavy import answers, still_wanted_of, stopping_refusal
from service.http.limiter import ScoreLimiter
from service.routes.common import errors
from service.schemas.common import NOT_BLANK_PATTERN, has_unstorable
from service.schemas.score import CompareIn, CompareOut, ScoreIn, ScoreOut

router = APIRouter(tags=["scoring"])
#: The unit of scoring's bound on a caller's work in flight (service/domain/fair_share.py).
SCORING = "tokens of scoring"

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
    # Asked between the pieces of a request's scoring and before its explanation (service/http/heavy.py).
    still_wanted: StillWanted = lambda: None
    stopping: Callable[[], bool] = lambda: False


def _identify(request: Request, creds: HTTPAuthorizationCredentials | None) -> scoring.Identify:
    """The key service.http.guard authenticated before the body was read, else looked up (401 if none)."""
    known = getattr(request.state, "principal", None)
    return lambda s: known if known is not None else principal_in(s, creds)


def _score_sync(ctx: Context, call: ScoreCall) -> Response:
    parse = partial(_parse, call.payload, call.content_type, call.version, call.explain)
    opened = scoring.open_request(ctx.reads, call.identify, call.handle, parse)
    if call.limiter is not None:
        refused = ratelimit.work_refusal(call.limiter, opened.who, sum(map(len, opened.texts)))
        if refused is not None:
            raise refused
    if call.stopping():
        raise stopping_refusal()
    with answers(SCORING):
        scored = scoring.score(ctx, opened, call.still_wanted, call.share)
    if scored.request.payload.explain:
        call.still_wanted()  # the explanation is the long part of a request
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
    call.still_wanted = still_wanted_of(request)
    call.stopping = request.app.state.stopping.is_set
    return await run_in_threadpool(_score_sync, ctx, call)


@router.post(
    "/models/{handle}/score/compare", response_model=CompareOut, responses=errors(403, 404, 409, 503)
)
def compare(handle: str, payload: CompareIn, who: AnyKey, ctx: CtxDep, request: Request) -> CompareOut:
    refused = ratelimit.work_refusal(request.app.state.limiter, who, len(payload.a) + len(payload.b))
    if refused is not None:
        raise refused
    with answers(SCORING):
        return scoring.compare(ctx, who, handle, payload, request.app.state.share)
