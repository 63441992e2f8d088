"""Perspective-compatible endpoints: `POST /v1alpha1/comments:analyze` and `comments:suggestscore`.

A requested attribute is a trait of one model (the request's `model`, else SCORING_PERSPECTIVE_MODEL),
matched by key or name without regard to case; `ATTRIBUTE@N` / `ATTRIBUTE@tag` pins a version.
Decisions: docs/perspective.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated

import numpy as np
import pyjson5
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from core.embedders.languages import detect_languages
from core.engine.errors import EmbedderUnavailableError, EngineError, ModelFileError
from core.json_types import JsonObject
from service.context import Context
from service.domain.scoring import add_feedback, feedback_target, find_targets, key_for, scorer_for
from service.errors import ApiError, request_id_of
from service.http import ratelimit
from service.perspective.compat import (
    SCORE_TYPE,
    LanguageNotSupported,
    check_languages,
    google_error,
    key_error,
    sentence_spans,
    split_attribute,
    utf16_spans,
)
from service.perspective.discovery import VERSION, discovery_document
from service.schemas.perspective import (
    AnalyzeIn,
    AnalyzeOut,
    AttributeScore,
    GoogleError,
    Score,
    SpanScore,
    SuggestScoreIn,
    SuggestScoreOut,
)
from service.store.api_keys import Principal

if TYPE_CHECKING:  # the engine loads with the first scorer, not with the routes
    from core.engine import TraitSpec

router = APIRouter(tags=["perspective"])

_ERRORS: dict[int | str, JsonObject] = {
    c: {"model": GoogleError, "description": d}
    for c, d in {
        400: "INVALID_ARGUMENT (a bad body or field; API_KEY_INVALID: a bad key) or FAILED_PRECONDITION",
        403: "PERMISSION_DENIED (CREDENTIALS_MISSING: no key; or the key may not do this)",
        404: "NOT_FOUND (the model, or a pinned version)",
        409: "ABORTED (the model is busy; retry)",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }.items()
}


def _body(schema: type[BaseModel]) -> JsonObject:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema.__name__}"}}},
        }
    }


# No length limit here: an over-long key is a key that is not valid, answered in Google's shape (not 422).
KeyParam = Annotated[str | None, Query(description="API key (or `Authorization: Bearer`)")]


class _KeyProblem(Exception):
    def __init__(self, missing: bool) -> None:
        self.missing = missing


def _principal(ctx: Context, request: Request, key: str | None) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    token = secret.strip() if scheme.lower() == "bearer" and secret.strip() else (key or "").strip()
    if not token:
        raise _KeyProblem(missing=True)
    found = key_for(ctx.reads, token)
    if found is None:
        raise _KeyProblem(missing=False)
    return found


# `Body`, here and in `_call`: a request body's schema (each scores a comment).
def _parse[Body: (AnalyzeIn, SuggestScoreIn)](raw: bytes, schema: type[Body]) -> Body:
    # JSON5, as Perspective's published examples send it (`{comment: {text: …}}`, trailing commas). The
    # body is already capped at 16 MiB (service.http.guard); maxdepth=-1 nests as deep as json.loads does, up
    # to the interpreter's recursion limit. pyjson5 (Cython) parses at about json's speed.
    try:
        data = pyjson5.decode_utf8(raw, maxdepth=-1)
    except (pyjson5.Json5Exception, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "validation_error", "The body is not valid JSON (or JSON5).") from None
    try:
        return schema.model_validate(data)
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


def _trait_index(traits: Sequence[TraitSpec], attribute: str, handle: str) -> int:
    wanted = attribute.casefold()
    for i, spec in enumerate(traits):
        if wanted in (spec.key.casefold(), spec.name.casefold()):
            return i
    raise ApiError(400, "unknown_attribute", f"Attribute {attribute!r} is not a trait of {handle}.")


def _analyze_sync(ctx: Context, who: Principal, payload: AnalyzeIn) -> JsonObject:
    handle = _handle(ctx, payload.model)
    for name, params in payload.requestedAttributes.items():
        if params.scoreType not in (None, SCORE_TYPE):
            raise ApiError(400, "validation_error", f"{name}: only scoreType {SCORE_TYPE} is supported.")
    text = payload.comment.text
    if payload.comment.type not in (None, "PLAIN_TEXT"):
        raise ApiError(400, "validation_error", "comment.type: only PLAIN_TEXT is supported.")
    spans = sentence_spans(text) if payload.spanAnnotations else []
    units = utf16_spans(text, spans)  # what the response reports; `spans` slice the Python string
    refs = {split_attribute(name)[1] for name in payload.requestedAttributes}
    targets = find_targets(ctx.reads, who, handle, refs)
    scorers = {
        ref: scorer_for(ctx, replace(t, zdr=True) if payload.doNotStore else t) for ref, t in targets.items()
    }
    if payload.languages:  # before any scoring: a refused request costs no embedding
        for name in payload.requestedAttributes:
            check_languages(name, payload.languages, scorers[split_attribute(name)[1]].embedder_id)
    # One scoring call per version: the whole comment, then each sentence.
    rows: dict[str | None, np.ndarray] = {}
    traits: dict[str | None, list[TraitSpec]] = {}
    for ref, scorer in scorers.items():
        rows[ref] = scorer.score([text] + [text[a:b] for a, b in spans])
        traits[ref] = list(scorer.traits)
    out: dict[str, AttributeScore] = {}
    for name, params in payload.requestedAttributes.items():
        base, ref = split_attribute(name)
        col = _trait_index(traits[ref], base, handle)
        matrix = rows[ref]
        floor = params.scoreThreshold or 0.0

        def score(row: int, col: int = col, matrix: np.ndarray = matrix) -> Score:
            return Score(value=round(min(1.0, max(0.0, float(matrix[row][col]))), 6), type=SCORE_TYPE)

        summary = score(0)
        kept = [
            SpanScore(begin=a, end=b, score=sc)
            for i, (a, b) in enumerate(units)
            if (sc := score(i + 1)).value >= floor
        ]
        entry = AttributeScore(
            summaryScore=summary if summary.value >= floor else None,
            spanScores=kept if payload.spanAnnotations and kept else None,
        )
        if entry.summaryScore is not None or entry.spanScores:
            out[name] = entry
    detected = detect_languages(text)
    result = AnalyzeOut(
        attributeScores=out,
        languages=payload.languages or detected,
        detectedLanguages=detected,
        clientToken=payload.clientToken,
    )
    return result.model_dump(exclude_none=True)


def _suggest_sync(ctx: Context, who: Principal, payload: SuggestScoreIn) -> JsonObject:
    handle = _handle(ctx, payload.model)
    t, by_name = feedback_target(ctx.reads, who, handle)
    items = []
    for name, suggested in payload.attributeScores.items():
        base = split_attribute(name)[0].casefold()
        key = by_name.get(base)
        if key is None:
            raise ApiError(400, "unknown_attribute", f"Attribute {name!r} is not a trait of {handle}.")
        items.append(_Label(key, suggested.summaryScore.value))
    add_feedback(ctx, t, payload.comment.text, items, who)
    return SuggestScoreOut(clientToken=payload.clientToken).model_dump(exclude_none=True)


@dataclass
class _Label:  # what add_feedback reads of a score request's feedback item
    trait: str
    quality: float


async def _call[Body: (AnalyzeIn, SuggestScoreIn)](
    ctx: Context,
    request: Request,
    key: str | None,
    schema: type[Body],
    work: Callable[[Context, Principal, Body], JsonObject],
) -> Response:
    """Authenticate, parse and run `work`, rendering every failure in Google's error shape."""
    rid = request_id_of(request)
    try:
        who = await run_in_threadpool(_principal, ctx, request, key)  # the key before a byte of the body
        refused = await ratelimit.scoring_refusal(request.app.state, who, ratelimit.ANY_NAMESPACE)
        if refused is not None:
            raise refused
        raw = await request.body()
        payload = _parse(raw, schema)
        # The same budget of scoring work as /score: counting requests alone let a few long comments take
        # a core from every other caller.
        limiter = request.app.state.limiter
        chars = len(payload.comment.text)
        refused = await run_in_threadpool(ratelimit.work_refusal, limiter, who, chars)
        if refused is not None:
            raise refused
        return JSONResponse(await run_in_threadpool(work, ctx, who, payload))
    except _KeyProblem as exc:
        return key_error(rid, missing=exc.missing)
    except ApiError as exc:
        extra = exc.details if isinstance(exc, LanguageNotSupported) else None  # Perspective's own detail
        return google_error(
            rid, exc.status, exc.code, exc.message, retryable=exc.retryable, headers=exc.headers, extra=extra
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


def _root_url(request: Request) -> str:
    """The externally visible base: SCORING_API_PUBLIC_URL behind a proxy, else the request's scheme, host."""
    configured = request.app.state.ctx.settings.public_url
    return configured or str(request.base_url)


@router.get("/$discovery/rest", include_in_schema=False)
async def discovery(request: Request, version: str = VERSION) -> Response:
    """Where google-api-python-client's `discovery.build(..., discoveryServiceUrl=…)` looks."""
    if version != VERSION:
        rid = request_id_of(request)
        return google_error(rid, 404, "not_found", f"No API version {version!r}: only {VERSION}.", headers={})
    return JSONResponse(discovery_document(_root_url(request)))


@router.get("/discovery/v1/apis/commentanalyzer/v1alpha1/rest", include_in_schema=False)
async def discovery_v1(request: Request) -> Response:
    """Google's Discovery service path for the same document (Node's googleapis, older clients)."""
    return JSONResponse(discovery_document(_root_url(request)))
