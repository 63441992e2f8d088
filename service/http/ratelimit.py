"""Rate limits per key or person and namespace, before a request's body is read (docs/api.md, "Limits").

Three token buckets per caller and namespace: writes (every POST, PUT, PATCH and DELETE under /v1 but
scoring and imports: labels, feedback labels, comments, claims, edits), imports (`POST …/samples`,
`…/pool`, `…/evaluation-set`: one token a request whatever its rows, so batching is never punished) and
scoring (`POST …/score` and `…/score/compare`, with or without feedback, and Perspective's two routes, which
call `refusal` themselves). An empty bucket answers 429 `rate_limited` with `Retry-After`, before the body is
read or anything is stored, so a flood costs the service a lookup. An import too small to be a batch
(`small_import`, once its rows are counted) takes a write token too: a flood of one-row imports is a flood of
labels. The buckets live in the database (service/store/rate_limits.py), which every process of a fleet
shares.
"""

from __future__ import annotations

import math
import time

from starlette.concurrency import run_in_threadpool
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from core.contract import SMALL_IMPORT_ROWS
from core.json_types import JsonObject
from service.config.settings import Settings
from service.context import Context
from service.errors import ApiError, envelope
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.rate_limits import Rate, take

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SCORING_PATHS = ("/score", "/score/compare")
#: The routes whose POST imports rows in batches (their `import` bucket).
IMPORT_PATHS = ("/models/{handle}/samples", "/models/{handle}/pool", "/models/{handle}/evaluation-set")
#: The bucket of requests whose path names no namespace (creating a model, Perspective's routes).
ANY_NAMESPACE = "*"


def rates(settings: Settings) -> dict[str, Rate]:
    """The buckets the settings turn on (a rate of 0: that kind is not limited)."""
    out = {
        "write": Rate(settings.write_rate_per_s, settings.write_burst),
        "import": Rate(settings.import_rate_per_s, settings.import_burst),
        "score": Rate(settings.score_rate_per_s, settings.score_burst),
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


def refusal(ctx: Context, who: Principal, kind: str, namespace: str) -> ApiError | None:
    """Take a token from the caller's `kind` bucket in `namespace`: None when taken (or not limited), else
    the 429 to answer."""
    rate = rates(ctx.settings).get(kind)
    if rate is None:
        return None
    caller = f"person:{who.person_id}" if who.person_id is not None else f"key:{who.key_id}"
    with transaction(ctx.sessions) as s:
        wait = take(s, f"{kind}|{namespace}|{caller}", rate, time.time())
    if wait <= 0:
        return None
    what = {"score": "scoring requests", "import": "import requests"}.get(kind, "writes")
    return ApiError(
        429,
        "rate_limited",
        f"Too many {what} from this caller in this namespace: at most {rate.burst} at once, then "
        f"{rate.per_s:g} a second. Nothing was stored; retry after Retry-After seconds.",
        retryable=True,
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


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
        refused = await run_in_threadpool(refusal, ctx, who, *found)
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
