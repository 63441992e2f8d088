"""Scoring: one or many contents, optional explanation and feedback; compare; text/plain bar chart."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypedDict

import anyio.from_thread
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError

from core.contract import MAX_TEXT_CHARS, MAX_VERSION_REF_CHARS, nearer_pole_is_positive
from core.json_types import JsonObject
from service.context import Context
from service.domain.decisions import with_decisions
from service.domain.scoring import add_feedback, find_target, require_feedback_writer, scorer_for
from service.errors import ApiError
from service.http import textplain
from service.http.auth import AnyKey, Credentials, CtxDep, principal_in
from service.routes.common import errors
from service.schemas.common import NOT_BLANK_PATTERN, has_unstorable
from service.schemas.score import (
    CompareIn,
    CompareOut,
    CompareSide,
    ScoreIn,
    ScoreOut,
    TraitDelta,
    TraitScore,
)
from service.store.api_keys import Principal
from service.store.db import transaction

if TYPE_CHECKING:  # the engine loads with the first scorer, not with the routes
    from core.engine import Scorer

router = APIRouter(tags=["scoring"])

_SCORE_ERRORS = errors(403, 404, 409, 415, 503)
_SCORE_200 = {
    "description": "Scores (JSON), or a bar chart with `Accept: text/plain`",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}


def _scores(scorer: Scorer, texts: list[str]) -> list[list[TraitScore]]:
    matrix = scorer.score(texts)
    out = []
    for row in matrix:
        block = []
        for spec, value in zip(scorer.traits, row, strict=True):
            v = min(1.0, max(0.0, float(value)))
            block.append(
                TraitScore(
                    trait=spec.key,
                    name=spec.name,
                    score=round(v, 6),
                    label=spec.positive_label if nearer_pole_is_positive(v) else spec.negative_label,
                    positive_label=spec.positive_label,
                    negative_label=spec.negative_label,
                )
            )
        out.append(block)
    return out


class _WordContribution(TypedDict):
    word: str
    contribution: float
    axis: float
    strength: float


def _explain(scorer: Scorer, text: str) -> dict[str, list[_WordContribution]]:
    return {
        key: [
            {
                "word": e.word,
                "contribution": round(e.contribution, 6),
                "axis": round(e.axis, 6),
                "strength": round(e.strength, 6),
            }
            for e in effects
        ]
        for key, effects in scorer.explain(text).items()
    }


def _wants_text(request: Request) -> bool:
    accept = request.headers.get("accept", "").lower()
    return "text/plain" in accept and "application/json" not in accept.split(",")[0]


def _parse(body: bytes, content_type: str, version: str | None, explain: bool) -> ScoreIn:
    media = content_type.split(";")[0].strip().lower()
    try:
        if media == "text/plain":
            text = body.decode("utf-8")
            if has_unstorable(text):
                raise ApiError(
                    422,
                    "validation_error",
                    "body: must not contain NUL characters (\\u0000) or lone surrogates.",
                    details=[{"loc": ["body"], "msg": "invalid character", "type": "invalid_character"}],
                )
            return ScoreIn(content=text, version=version, explain=explain)
        if media == "application/json" or media.endswith("+json"):
            data = json.loads(body) if body else None
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
    body: bytes
    content_type: str
    version: str | None  # query parameters, for raw bodies
    explain: bool
    as_text: bool
    who: Principal | None = None  # authenticated by service.http.guard before the body was read
    # Whether the client has gone away; checked before the explanation, the long part of a request.
    disconnected: Callable[[], bool] = lambda: False


def _score_sync(ctx: Context, creds: HTTPAuthorizationCredentials | None, call: ScoreCall) -> Response:
    # The hot path: the key, the body and the target in one thread hop and one read transaction.
    with transaction(ctx.reads) as s:
        who = call.who or principal_in(s, creds)
        req = _parse(call.body, call.content_type, call.version, call.explain)
        t = find_target(s, who, call.handle, req.version)
    if req.explain and isinstance(req.content, list) and len(req.content) > 1:
        raise ApiError(
            422,
            "validation_error",
            "explain works on one content per request (it scores each word's absence); "
            "send the others without explain.",
            details=[{"loc": ["body", "explain"], "msg": "one content per request", "type": "explain_cap"}],
        )
    if req.feedback:
        require_feedback_writer(who, t)  # before anything is scored, cached or buffered
        if t.zdr:
            raise ApiError(
                409,
                "zero_data_retention",
                "Feedback is rejected under zero-data-retention: content is never stored.",
            )
        if isinstance(req.content, list):
            raise ApiError(422, "validation_error", "feedback labels a single content, not a list.")
    texts = req.content if isinstance(req.content, list) else [req.content]
    scorer = scorer_for(ctx, t)
    blocks = _scores(scorer, texts)
    buffered = add_feedback(ctx, t, texts[0], req.feedback, who.annotator)[0] if req.feedback else None
    if req.explain and call.disconnected():
        raise ApiError(499, "client_closed_request", "The client went away before the explanation.")
    if call.as_text:
        headers = {} if buffered is None else {"X-Feedback-Buffered": str(buffered)}
        return PlainTextResponse(textplain.render(t.handle, t.version_no, t.tags, blocks), headers=headers)
    out: JsonObject = {"handle": t.handle, "version_no": t.version_no, "version_tags": t.tags}
    if isinstance(req.content, list):
        results = []
        for i, (text, block) in enumerate(zip(texts, blocks, strict=True)):
            item: JsonObject = {"index": i, "scores": with_decisions(block, t.thresholds)}
            if req.explain:
                item["explanation"] = _explain(scorer, text)
            results.append(item)
        out["results"] = results
    else:
        out["scores"] = with_decisions(blocks[0], t.thresholds)
        if req.explain:
            out["explanation"] = _explain(scorer, texts[0])
    if buffered is not None:
        out["feedback_buffered"] = buffered
    return JSONResponse(out)


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
    call = ScoreCall(handle, await request.body(), content_type, version, explain, _wants_text(request))
    call.who = getattr(request.state, "principal", None)
    call.disconnected = lambda: anyio.from_thread.run(request.is_disconnected)
    return await run_in_threadpool(_score_sync, ctx, creds, call)


def _compare_sync(ctx: Context, who: Principal, handle: str, body: CompareIn) -> CompareOut:
    with transaction(ctx.reads) as s:
        t = find_target(s, who, handle, body.version)
    a, b = _scores(scorer_for(ctx, t), [body.a, body.b])
    diff = [
        TraitDelta(trait=x.trait, name=x.name, delta=round(y.score - x.score, 6))
        for x, y in zip(a, b, strict=True)
    ]
    return CompareOut(
        handle=t.handle,
        version_no=t.version_no,
        version_tags=t.tags,
        a=CompareSide(scores=a),
        b=CompareSide(scores=b),
        difference=diff,
    )


@router.post(
    "/models/{handle}/score/compare", response_model=CompareOut, responses=errors(403, 404, 409, 503)
)
def compare(handle: str, body: CompareIn, who: AnyKey, ctx: CtxDep) -> CompareOut:
    return _compare_sync(ctx, who, handle, body)
