"""Scoring: one or many contents, optional explanation and feedback; compare; text/plain bar chart."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio.from_thread
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import MAX_TEXT_CHARS, is_positive
from service import runs, textplain
from service.auth import AnyKey, Credentials, CtxDep, principal_in, require_readable
from service.context import Context
from service.db import transaction
from service.domain.versions import version_filter, version_not_found
from service.errors import ApiError
from service.keys import Principal
from service.routes.common import errors
from service.schemas import (
    NOT_BLANK_PATTERN,
    CompareIn,
    CompareOut,
    CompareSide,
    ScoreIn,
    ScoreOut,
    TraitDelta,
    TraitScore,
    has_unstorable,
)
from service.states import require_not_archived
from service.tables import FeedbackLabel, Model, Tag, Trait, Version, utcnow
from service.testhooks import pause
from service.thresholds import with_decisions

router = APIRouter(tags=["scoring"])

_SCORE_ERRORS = errors(403, 404, 409, 415, 503)
_SCORE_200 = {
    "description": "Scores (JSON), or a bar chart with `Accept: text/plain`",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}


@dataclass
class Target:
    model_id: int
    handle: str
    namespace: str
    zdr: bool
    ready: bool
    version_id: int
    version_no: int
    tags: list[str]
    thresholds: dict[str, Any] | None = None  # per-trait decision thresholds of the version (docs/api.md)


def _target(s: Session, who: Principal, handle: str, ref: str | None) -> Target:
    """The model, version and tags a score request needs, in one query: scoring is the hot path."""
    tags = select(func.aggregate_strings(Tag.name, ",")).where(Tag.version_id == Version.id)  # no "," in tags
    query = (
        select(
            Model.id,
            Model.namespace,
            Model.state,
            Model.zero_data_retention,
            Version.id.label("version_id"),
            Version.version_no,
            Version.thresholds,
            tags.scalar_subquery().label("tags"),
        )
        .outerjoin(Version, version_filter(Model.id, ref) if ref else Version.id == Model.current_version_id)
        .where(Model.handle == handle)
    )
    row = s.execute(query).one_or_none()
    require_readable(who, handle, row.namespace if row else None)
    assert row is not None
    require_not_archived(row)
    if row.version_id is None:
        if ref:
            raise version_not_found(handle, ref)
        raise ApiError(409, "no_active_version", f"{handle} has no trained version yet.")
    return Target(
        row.id,
        handle,
        row.namespace,
        row.zero_data_retention,
        row.state == "ready",
        row.version_id,
        row.version_no,
        sorted(row.tags.split(",")) if row.tags else [],  # as views.tags_of does
        row.thresholds,
    )


def _scorer(ctx: Context, t: Target) -> Any:
    def load() -> dict[str, Any]:
        with ctx.reads() as s:
            snap = s.scalar(select(Version.snapshot).where(Version.id == t.version_id))
        if snap is None:
            raise ApiError(404, "version_not_found", "The version was pruned while scoring; retry.")
        return snap

    return ctx.scorers.get(t.version_id, load, retain=not t.zdr)


def _scores(scorer: Any, texts: list[str]) -> list[list[TraitScore]]:
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
                    label=spec.positive_label if is_positive(v) else spec.negative_label,
                    positive_label=spec.positive_label,
                    negative_label=spec.negative_label,
                )
            )
        out.append(block)
    return out


def _explain(scorer: Any, text: str) -> dict[str, list[dict[str, Any]]]:
    raw = scorer.explain(text)
    return {
        key: [{"word": w, "contribution": round(float(c), 6)} for w, c in pairs] for key, pairs in raw.items()
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


def _add_feedback(ctx: Context, t: Target, text: str, items: list[Any]) -> tuple[int, str | None]:
    """Buffer feedback labels; queue an automatic retraining when the buffer is full."""
    with transaction(ctx.sessions) as s:
        # Lock the model row (PostgreSQL) so concurrent feedback cannot each see a full buffer on a
        # ready model and queue one retraining apiece.
        model = s.scalar(select(Model).where(Model.id == t.model_id).with_for_update())
        assert model is not None
        traits = s.scalars(select(Trait).where(Trait.model_id == model.id)).all()
        by = {t_.key: t_.key for t_ in traits} | {t_.name: t_.key for t_ in traits}
        for i, item in enumerate(items):
            if item.trait not in by:
                raise ApiError(422, "unknown_trait", f"feedback[{i}]: no trait {item.trait!r}.")
            s.add(
                FeedbackLabel(
                    model_id=model.id,
                    trait_key=by[item.trait],
                    text=text,
                    quality=item.quality,
                    created_at=utcnow(),
                )
            )
        s.flush()
        buffered = (
            s.scalar(
                select(func.count()).select_from(FeedbackLabel).where(FeedbackLabel.model_id == model.id)
            )
            or 0
        )
        pause(ctx.settings.test_hooks.slow_feedback, t.handle, f"feedback ({buffered} buffered)")
        run_id = None
        if (
            buffered >= ctx.settings.retrain_buffer
            and model.state == "ready"
            and not model.zero_data_retention
        ):
            run_id = runs.create_run(
                s, model, "retrain", {"triggered_by": "retrain_buffered", "reuse_params": True}
            ).id
    if run_id is not None:
        ctx.enqueue(run_id)
    return len(items), run_id


def require_feedback_writer(who: Principal, t: Target) -> None:
    """Feedback is a write (it buffers samples and can retrain the model): an authoring key that owns the
    model's namespace, as for any other edit. Reading and scoring a public model stay open to every key."""
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", "Feedback needs an authoring key: it changes the model.")
    if not who.owns(t.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {t.namespace!r}: no feedback.")


@dataclass
class ScoreCall:
    handle: str
    body: bytes
    content_type: str
    version: str | None  # query parameters, for raw bodies
    explain: bool
    as_text: bool
    who: Principal | None = None  # authenticated by service.guard before the body was read
    # Whether the client has gone away; checked before the explanation, the long part of a request.
    disconnected: Callable[[], bool] = lambda: False


def _score_sync(ctx: Context, creds: HTTPAuthorizationCredentials | None, call: ScoreCall) -> Response:
    # The hot path: the key, the body and the target in one thread hop and one read transaction.
    with transaction(ctx.reads) as s:
        who = call.who or principal_in(s, creds)
        req = _parse(call.body, call.content_type, call.version, call.explain)
        t = _target(s, who, call.handle, req.version)
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
    scorer = _scorer(ctx, t)
    blocks = _scores(scorer, texts)
    buffered = _add_feedback(ctx, t, texts[0], req.feedback)[0] if req.feedback else None
    if req.explain and call.disconnected():
        raise ApiError(499, "client_closed_request", "The client went away before the explanation.")
    if call.as_text:
        headers = {} if buffered is None else {"X-Feedback-Buffered": str(buffered)}
        return PlainTextResponse(textplain.render(t.handle, t.version_no, t.tags, blocks), headers=headers)
    out: dict[str, Any] = {"handle": t.handle, "version_no": t.version_no, "version_tags": t.tags}
    if isinstance(req.content, list):
        results = []
        for i, (text, block) in enumerate(zip(texts, blocks, strict=True)):
            item: dict[str, Any] = {"index": i, "scores": with_decisions(block, t.thresholds)}
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
    version: Annotated[str | None, Query(max_length=64, description="`vN` or a tag (raw bodies)")] = None,
    explain: Annotated[bool, Query(description="Per-word explanation (raw bodies)")] = False,
) -> Response:
    content_type = request.headers.get("content-type", "application/json")
    call = ScoreCall(handle, await request.body(), content_type, version, explain, _wants_text(request))
    call.who = getattr(request.state, "principal", None)
    call.disconnected = lambda: anyio.from_thread.run(request.is_disconnected)
    return await run_in_threadpool(_score_sync, ctx, creds, call)


def _compare_sync(ctx: Context, who: Principal, handle: str, body: CompareIn) -> CompareOut:
    with transaction(ctx.reads) as s:
        t = _target(s, who, handle, body.version)
    a, b = _scores(_scorer(ctx, t), [body.a, body.b])
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
