"""Rate limits per key or person and namespace, before a request's body is read (docs/api.md, "Limits").

Three limits per caller and namespace: writes (every POST, PUT, PATCH and DELETE under /v1 but scoring,
imports and the reads sent as POST: labels, feedback labels, comments, claims, edits), imports (`POST
…/samples`, `…/pool`, `…/evaluation-set`: one token a request whatever its rows, so batching is never
punished) and scoring (`POST …/score` and `…/score/compare`, with or without feedback, the pool's
suggestions and a trait's preview, which score texts and read, and Perspective's two routes, which call
`score_refusal` themselves; the scoring limit counts only while another caller has scoring in flight in
this process, so a caller alone is never refused). A caller past a limit gets 429 `rate_limited` with
`Retry-After`, before the body is read or anything is stored, so a flood costs the service a lookup. An
import too small to be a batch (`small_import`, once its rows are counted) takes a write token too: a flood
of one-row imports is a flood of labels. Writes and imports take from token buckets in the database
(service/store/rate_limits.py), which every process of a fleet shares; scoring never touches the database
(service/http/limiter.py).
"""

from __future__ import annotations

import math
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from core.contract import SMALL_IMPORT_ROWS
from core.json_types import JsonObject
from service.config.settings import Settings
from service.context import Context
from service.domain.fair_share import FairShare
from service.domain.scoring import caller_of
from service.errors import ApiError, envelope
from service.http.limiter import ScoreLimiter
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.rate_limits import Rate, take

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Scoring, and the POSTs that only read and score texts (the pool's suggestions, a trait's preview; a
#: claiming suggestion's leases are their one write, bounded per person by SCORING_CLAIMS_PER_PERSON).
SCORING_PATHS = ("/score", "/score/compare", "/pool/suggest", "/traits/preview")
#: The routes whose POST imports rows in batches (their `import` bucket).
IMPORT_PATHS = ("/models/{handle}/samples", "/models/{handle}/pool", "/models/{handle}/evaluation-set")
#: The bucket of requests whose path names no namespace (creating a model, Perspective's routes).
ANY_NAMESPACE = "*"


def rates(settings: Settings) -> dict[str, Rate]:
    """The database's buckets the settings turn on (a rate of 0: that kind is not limited)."""
    out = {
        "write": Rate(settings.write_rate_per_s, settings.write_burst),
        "import": Rate(settings.import_rate_per_s, settings.import_burst),
    }
    return {kind: rate for kind, rate in out.items() if rate.per_s > 0}


def bucket_of(scope: Scope) -> tuple[str, str] | None:
    """(kind, namespace) of a request under /v1, or None for one no bucket counts (reads)."""
    if scope["method"] not in WRITES:
        return None
    for route in scope["app"].router.routes:
        match, child = route.matches(scope)
        if match == Match.FULL:
            path: str = getattr(route, "path", "")
            params: dict[str, str] = child.get("path_params", {})
            break
    else:
        return None
    if path.endswith(SCORING_PATHS):
        kind = "score"
    elif scope["method"] == "POST" and path.endswith(IMPORT_PATHS):
        kind = "import"
    else:
        kind = "write"
    handle = params.get("handle")
    return kind, handle.split(".", 1)[0] if handle else params.get("namespace", ANY_NAMESPACE)


def _caller(who: Principal) -> str:
    return caller_of(who)


def _limited(what: str, allowance: str, wait: float) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"Too many {what} from this caller in this namespace: at most {allowance}. Nothing was stored; "
        "retry after Retry-After seconds.",
        retryable=True,
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


def refusal(ctx: Context, who: Principal, kind: str, namespace: str) -> ApiError | None:
    """Take a token from the caller's `kind` bucket in `namespace` ("write" or "import"): None when taken
    (or not limited), else the 429 to answer."""
    rate = rates(ctx.settings).get(kind)
    if rate is None:
        return None
    with transaction(ctx.sessions) as s:
        wait = take(s, f"{kind}|{namespace}|{_caller(who)}", rate, time.time())
    if wait <= 0:
        return None
    what = "import requests" if kind == "import" else "writes"
    return _limited(what, f"{rate.burst} at once, then {rate.per_s:g} a second", wait)


def score_refusal(limiter: ScoreLimiter, who: Principal, namespace: str) -> ApiError | None:
    """Take a scoring token (in memory or on Redis, never the database): None when taken, else the 429."""
    wait = limiter.take(f"score|{namespace}|{_caller(who)}")
    if wait <= 0 or limiter.window is None:
        return None
    w = limiter.window
    return _limited("scoring requests", f"{w.amount} in any {w.seconds} s", wait)


def work_refusal(limiter: ScoreLimiter, who: Principal, chars: int) -> ApiError | None:
    """A score request's `chars` characters against the cap on one request (413) and the caller's budget of
    scoring work in all its namespaces (429; charged when it passes): None when the request may be scored.
    Called once the body is read (only then are its characters known), before anything is scored."""
    cap = limiter.request_chars
    if cap and chars > cap:
        return ApiError(
            413,
            "payload_too_large",
            f"The request's texts have {chars:,} characters; one score request may carry {cap:,}. "
            "Send them in smaller requests.",
        )
    wait = limiter.take_work(f"chars|{_caller(who)}", chars)
    if wait <= 0 or limiter.work is None:
        return None
    w = limiter.work
    return ApiError(
        429,
        "rate_limited",
        f"Too many characters scored by this caller: at most {w.amount:,} in any {w.seconds} s, in all its "
        "namespaces. Nothing was scored; retry after Retry-After seconds.",
        retryable=True,
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


async def score_refusal_async(limiter: ScoreLimiter, who: Principal, namespace: str) -> ApiError | None:
    """`score_refusal` on the event loop for the memory limiter (a lock and a list: no thread hop on the hot
    path), in a thread for Redis's network round trip."""
    if limiter.shared:
        return await run_in_threadpool(score_refusal, limiter, who, namespace)
    return score_refusal(limiter, who, namespace)


async def scoring_refusal(state: Any, who: Principal, namespace: str) -> ApiError | None:
    """The scoring limit of a request, counted only while another caller has scoring in flight in this
    process (`state`: the app's): a caller alone is never refused, however many requests it sends."""
    share: FairShare | None = getattr(state, "share", None)
    if share is not None and not share.others_busy(_caller(who)):
        return None
    return await score_refusal_async(state.limiter, who, namespace)


def small_import(ctx: Context, who: Principal, handle: str, rows: int) -> None:
    """An import of fewer than SMALL_IMPORT_ROWS rows also takes a write token (it is a label's size):
    ApiError 429 when the writes bucket is empty. Called by the import routes before anything is stored."""
    if rows < SMALL_IMPORT_ROWS and (refused := refusal(ctx, who, "write", handle.split(".", 1)[0])):
        raise refused


def document(schema: JsonObject) -> None:
    """Every limited operation of the OpenAPI document lists its 429 (the middleware answers it, not the
    route, so FastAPI cannot know)."""
    answer: JsonObject = {
        "description": "Rate limited (`rate_limited`): retry after `Retry-After` seconds; nothing was stored",
        "headers": {
            "Retry-After": {"description": "Seconds until a token is back", "schema": {"type": "integer"}}
        },
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
    }
    for path, operations in schema.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            if method.upper() in WRITES:
                operation.setdefault("responses", {})["429"] = answer


class RateLimitMiddleware:
    """Inside service.http.guard's middleware, which put the caller in the request's state."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        who: Principal | None = scope.get("state", {}).get("principal") if scope["type"] == "http" else None
        ctx: Context | None = getattr(scope["app"].state, "ctx", None) if who is not None else None
        found = bucket_of(scope) if who is not None and ctx is not None else None
        if found is None or who is None or ctx is None:
            await self.app(scope, receive, send)
            return
        kind, namespace = found
        if kind == "score":
            refused = await scoring_refusal(scope["app"].state, who, namespace)
        else:
            refused = await run_in_threadpool(refusal, ctx, who, kind, namespace)
        if refused is None:
            await self.app(scope, receive, send)
            return
        response = envelope(
            scope["state"]["request_id"],
            refused.status,
            refused.code,
            refused.message,
            retryable=refused.retryable,
            headers=refused.headers,
        )
        await response(scope, receive, send)
