"""Perspective-compatible endpoints: `POST /v1alpha1/comments:analyze` and `comments:suggestscore`.

A requested attribute is a trait of one model (the request's `model`, else SCORING_PERSPECTIVE_MODEL),
matched by key or name without regard to case; `ATTRIBUTE@N` / `ATTRIBUTE@tag` pins a version.
Decisions: docs/perspective.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ValidationError
from sqlalchemy import select

from core.engine.errors import EmbedderUnavailableError, EngineError, ModelFileError
from service.auth import principal_in
from service.context import Context
from service.db import transaction
from service.errors import ApiError, request_id_of
from service.keys import Principal
from service.perspective import (
    SCORE_TYPE,
    AnalyzeIn,
    AnalyzeOut,
    AttributeScore,
    GoogleError,
    Score,
    SpanScore,
    SuggestScoreIn,
    SuggestScoreOut,
    detect_languages,
    google_error,
    sentence_spans,
    split_attribute,
)
from service.routes.score import Target, _add_feedback, _scorer, _target
from service.tables import Trait

router = APIRouter(tags=["perspective"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    c: {"model": GoogleError, "description": d}
    for c, d in {
        400: "INVALID_ARGUMENT or FAILED_PRECONDITION",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND (the model, or a pinned version)",
        409: "ABORTED (the model is busy; retry)",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }.items()
}


def _body(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema.__name__}"}}},
        }
    }


KeyParam = Annotated[str | None, Query(max_length=200, description="API key (or `Authorization: Bearer`)")]


def _principal(ctx: Context, request: Request, key: str | None) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    token = secret.strip() if scheme.lower() == "bearer" and secret.strip() else (key or "")
    creds = HTTPAuthorizationCredentials(scheme="Bearer", credentials=token) if token else None
    with transaction(ctx.reads) as s:
        return principal_in(s, creds)


def _parse(raw: bytes, schema: type[BaseModel]) -> Any:
    try:
        return schema.model_validate(json.loads(raw))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ApiError(400, "validation_error", "The body is not valid JSON.") from None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(
            400, "validation_error", f"{where}: {first['msg']}" if where else first["msg"]
        ) from None


def _handle(ctx: Context, named: str | None) -> str:
    handle = named or ctx.settings.perspective_model
    if not handle:
        raise ApiError(
            400,
            "no_model",
            "Name the model: the request's `model` field, or SCORING_PERSPECTIVE_MODEL on the server.",
        )
    return handle


def _trait_index(traits: list[Any], attribute: str, handle: str) -> int:
    wanted = attribute.casefold()
    for i, spec in enumerate(traits):
        if wanted in (spec.key.casefold(), spec.name.casefold()):
            return i
    raise ApiError(400, "unknown_attribute", f"Attribute {attribute!r} is not a trait of {handle}.")


def _analyze_sync(ctx: Context, who: Principal, body: AnalyzeIn) -> dict[str, Any]:
    handle = _handle(ctx, body.model)
    for name, params in body.requestedAttributes.items():
        if params.scoreType not in (None, SCORE_TYPE):
            raise ApiError(400, "validation_error", f"{name}: only scoreType {SCORE_TYPE} is supported.")
    text = body.comment.text
    if body.comment.type not in (None, "PLAIN_TEXT"):
        raise ApiError(400, "validation_error", "comment.type: only PLAIN_TEXT is supported.")
    spans = sentence_spans(text) if body.spanAnnotations else []
    refs = {split_attribute(name)[1] for name in body.requestedAttributes}
    targets: dict[str | None, Target] = {}
    with transaction(ctx.reads) as s:
        for ref in refs:
            targets[ref] = _target(s, who, handle, ref)
    # One scoring call per version: the whole comment, then each sentence.
    rows: dict[str | None, Any] = {}
    traits: dict[str | None, list[Any]] = {}
    for ref, t in targets.items():
        scorer = _scorer(ctx, replace(t, zdr=True) if body.doNotStore else t)
        rows[ref] = scorer.score([text] + [text[a:b] for a, b in spans])
        traits[ref] = list(scorer.traits)
    out: dict[str, AttributeScore] = {}
    for name, params in body.requestedAttributes.items():
        base, ref = split_attribute(name)
        col = _trait_index(traits[ref], base, handle)
        matrix = rows[ref]
        floor = params.scoreThreshold or 0.0

        def score(row: int, col: int = col, matrix: Any = matrix) -> Score:
            return Score(value=round(min(1.0, max(0.0, float(matrix[row][col]))), 6), type=SCORE_TYPE)

        summary = score(0)
        kept = [
            SpanScore(begin=a, end=b, score=sc)
            for i, (a, b) in enumerate(spans)
            if (sc := score(i + 1)).value >= floor
        ]
        entry = AttributeScore(
            summaryScore=summary if summary.value >= floor else None,
            spanScores=kept if body.spanAnnotations and kept else None,
        )
        if entry.summaryScore is not None or entry.spanScores:
            out[name] = entry
    detected = detect_languages(text)
    result = AnalyzeOut(
        attributeScores=out,
        languages=body.languages or detected,
        detectedLanguages=detected,
        clientToken=body.clientToken,
    )
    return result.model_dump(exclude_none=True)


def _suggest_sync(ctx: Context, who: Principal, body: SuggestScoreIn) -> dict[str, Any]:
    handle = _handle(ctx, body.model)
    with transaction(ctx.reads) as s:
        t = _target(s, who, handle, None)
        # Feedback is a write: only an authoring key that owns the model's namespace may send it.
        if who.scope != "authoring" or not who.owns(handle.split(".", 1)[0]):
            raise ApiError(
                403, "forbidden", f"Feedback needs an authoring key that owns {handle}'s namespace."
            )
        traits = s.scalars(select(Trait).where(Trait.model_id == t.model_id)).all()
    by_name = {tr.name.casefold(): tr.key for tr in traits} | {tr.key: tr.key for tr in traits}
    if t.zdr:
        raise ApiError(
            409,
            "zero_data_retention",
            f"{handle} has zero-data-retention on: feedback would store the comment.",
        )
    items = []
    for name, suggested in body.attributeScores.items():
        base = split_attribute(name)[0].casefold()
        key = by_name.get(base)
        if key is None:
            raise ApiError(400, "unknown_attribute", f"Attribute {name!r} is not a trait of {handle}.")
        items.append(_Label(key, suggested.summaryScore.value))
    _add_feedback(ctx, t, body.comment.text, items)
    return SuggestScoreOut(clientToken=body.clientToken).model_dump(exclude_none=True)


@dataclass
class _Label:  # what _add_feedback reads of a score request's feedback item
    trait: str
    quality: float


async def _call(
    ctx: Context, request: Request, key: str | None, schema: type[BaseModel], work: Any
) -> Response:
    """Authenticate, parse and run `work`, rendering every failure in Google's error shape."""
    rid = request_id_of(request)
    try:
        who = await run_in_threadpool(_principal, ctx, request, key)  # the key before a byte of the body
        raw = await request.body()
        body = _parse(raw, schema)
        return JSONResponse(await run_in_threadpool(work, ctx, who, body))
    except ApiError as exc:
        return google_error(
            rid, exc.status, exc.code, exc.message, retryable=exc.retryable, headers=exc.headers
        )
    except (EmbedderUnavailableError, ModelFileError) as exc:
        return google_error(rid, 503, exc.code, str(exc), headers={})
    except EngineError as exc:
        return google_error(rid, 400, exc.code, str(exc), headers={})


@router.post(
    "/v1alpha1/comments:analyze",
    response_model=AnalyzeOut,
    response_model_exclude_none=True,
    responses=_ERRORS,
    openapi_extra=_body(AnalyzeIn),
)
async def analyze(request: Request, key: KeyParam = None) -> Response:
    return await _call(request.app.state.ctx, request, key, AnalyzeIn, _analyze_sync)


@router.post(
    "/v1alpha1/comments:suggestscore",
    response_model=SuggestScoreOut,
    response_model_exclude_none=True,
    responses=_ERRORS,
    openapi_extra=_body(SuggestScoreIn),
)
async def suggestscore(request: Request, key: KeyParam = None) -> Response:
    return await _call(request.app.state.ctx, request, key, SuggestScoreIn, _suggest_sync)
