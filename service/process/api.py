"""The FastAPI application: every route under /v1, one error envelope, request ids, a worker."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import get_args, get_origin

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.dependencies.utils import get_flat_dependant
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.routing import BaseRoute

from core.json_types import JsonObject
from service.config.settings import Settings
from service.context import Context
from service.domain.fair_share import FairShare
from service.errors import ApiError, ErrorEnvelope, RequestIdMiddleware, install_error_handlers
from service.http import api_docs, ratelimit
from service.http.guard import GuardMiddleware
from service.http.limiter import ScoreLimiter
from service.http.oidc import OidcVerifier
from service.http.ratelimit import RateLimitMiddleware
from service.http.refusals import access_cap, record_refusal
from service.http.shutdown import Shutdown, ShutdownMiddleware
from service.routes import (
    agreement,
    assignments,
    audit,
    eval_compare,
    evaluation,
    feedback,
    gold,
    guidelines,
    history,
    keys_info,
    models,
    my_labels,
    notes,
    people,
    perspective,
    pool,
    preview,
    review,
    runs,
    samples,
    score,
    team,
    thresholds,
    traits,
    versions,
)
from service.schemas.common import NO_NUL_PATTERN, EmbedderGraph, Health
from service.schemas.perspective import AnalyzeIn, SuggestScoreIn
from service.schemas.score import ScoreIn

log = logging.getLogger("service")
PREFIX = "/v1"


def _version() -> str:
    try:
        return package_version("scoring-workbench")
    except PackageNotFoundError:
        return "0.0.0"


def forbid_nul(node: object) -> None:
    """Give every string of the document without a pattern or enum the no-NUL pattern (docs/api.md: text
    with a NUL is refused everywhere), so the document states what the service accepts."""
    if isinstance(node, dict):
        if (
            node.get("type") == "string"
            and "pattern" not in node
            and "enum" not in node
            and "format" not in node
        ):
            node["pattern"] = NO_NUL_PATTERN
        for value in node.values():
            forbid_nul(value)
    elif isinstance(node, list):
        for value in node:
            forbid_nul(value)


def _takes_one(annotation: object) -> bool:
    """A parameter's annotation names no list (`list[str] | None` takes the parameter repeated)."""
    return not any(get_origin(a) in (list, tuple, set) for a in (annotation, *get_args(annotation)))


def _query_names(route: APIRoute) -> dict[str, bool]:
    """The route's query parameters, each with whether it takes one value (a list takes it repeated)."""
    # Kept on the route itself: a cache keyed by id(route) outlives the app, and a later app's route can reuse
    # a collected route's id and get its names (an intermittent 422 in tests that build many apps).
    names: dict[str, bool] | None = getattr(route, "_scoring_query_names", None)
    if names is None:
        names = {
            p.alias: _takes_one(p.field_info.annotation)
            for p in get_flat_dependant(route.dependant).query_params
        }
        setattr(route, "_scoring_query_names", names)  # noqa: B010 (APIRoute declares no such attribute)
    return names


def refuse_unknown_query(request: Request) -> None:
    """An unknown query parameter is refused like an unknown body field (422 `unknown_field`): a misspelt
    `limt=5` must not be silently ignored; nor may a one-value parameter given twice (`kind=a&kind=b`),
    whose first value would be dropped without a word (422 `validation_error`, `repeated_parameter`)."""
    route = request.scope.get("route")
    known = _query_names(route) if isinstance(route, APIRoute) else {}
    unknown = [name for name in request.query_params if name not in known]
    if unknown:
        raise RequestValidationError(
            [
                {"loc": ("query", n), "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
                for n in unknown
            ]
        )
    given = [name for name, _ in request.query_params.multi_items()]
    repeated = sorted({n for n in given if known[n] and given.count(n) > 1})
    if repeated:
        raise RequestValidationError(
            [
                {"loc": ("query", n), "msg": "must be given once", "type": "repeated_parameter"}
                for n in repeated
            ]
        )


def get_health() -> Health:
    from core.embedders.registry import short_name
    from service.runs import prebuild

    graphs = [
        EmbedderGraph(embedder=i, name=short_name(i), state=state) for i, state in prebuild.states().items()
    ]
    return Health(status="ok", version=_version(), embedders=graphs)


@functools.cache
def route_table() -> tuple[BaseRoute, ...]:
    """Every API route, built once per process and shared by the apps built in it.

    Building a route analyses its endpoint's dependencies and builds pydantic adapters for each parameter
    and response model: about 0.3 s for the ~64 routes, paid again by every `include_router`. Nothing in a
    route depends on the app or its settings (a request finds its Context on `request.app.state`), so the
    table is built once on a router of its own, with the app's defaults; only what the app itself owns
    (middleware, state, docs, the OpenAPI document) is built per app. The one thing lost is
    `app.dependency_overrides`, which these routes do not consult (the service and its tests use none).
    """
    table = APIRouter()
    health = APIRouter(tags=["health"])
    health.get(
        "/health",
        response_model=Health,
        responses={500: {"model": ErrorEnvelope, "description": "Internal error"}},
    )(get_health)
    table.include_router(health, prefix=PREFIX, dependencies=[Depends(refuse_unknown_query)])
    routers = (models, traits, preview, samples, runs, versions, history, evaluation, score, keys_info, pool)
    for module in (
        *routers,
        thresholds,
        eval_compare,
        agreement,
        feedback,
        audit,
        team,
        notes,
        people,
        review,
        assignments,
        gold,
        my_labels,
        guidelines,
    ):
        table.include_router(module.router, prefix=PREFIX, dependencies=[Depends(refuse_unknown_query)])
    table.include_router(perspective.router)  # Perspective's own paths, outside /v1 (docs/perspective.md)
    return tuple(table.routes)


def create_app(settings: Settings | None = None, *, context: Context | None = None) -> FastAPI:
    """Build the app; migrations run here. The worker starts with the app's lifespan."""
    settings = settings or Settings.from_env()
    ctx = context or Context.build(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if ctx.settings.run_worker:
            ctx.start_worker()
        else:
            ctx.start_recovery()
        try:
            yield
        finally:
            ctx.close()
            log.info("service stopped")

    app = FastAPI(
        title="Model Scoring Service",
        version=_version(),
        description="Authoring, lifecycle and scoring of text-scoring models. Decisions: docs/api.md.",
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,  # served by api_docs, without a CDN
        redoc_url=None,
        lifespan=lifespan,
        # No redirect to the slash-less path: its Location would be built from the client's Host header.
        redirect_slashes=False,
    )
    app.state.ctx = ctx
    # Set when the server starts to stop (SIGTERM): score requests in flight end at their next piece with a
    # retryable 503, so a stop never waits on scoring work queued for clients (service/routes/score.py).
    app.state.stopping = threading.Event()
    # Scoring's rate limit: per process (or on the queue's Redis), never in the database.
    app.state.limiter = ScoreLimiter(ctx.settings)
    log.info("%s", app.state.limiter.describe())
    # Scoring's turns: pieces of score requests share the scoring threads by cost (domain/fair_share.py).
    app.state.share = FairShare(
        ctx.embedders.scoring_threads if ctx.settings.score_fair_share else 0, ctx.settings.score_caller_cost
    )
    log.info("%s", app.state.share.describe())
    # A caller's suggestion, pool and listing requests in flight (service/http/heavy.py): admission only.
    app.state.heavy = FairShare(0, ctx.settings.heavy_per_caller)
    # What a stop answers to the requests it finds in flight (service/http/shutdown.py).
    app.state.shutdown = Shutdown()
    # People sign in through the team's identity provider: their ID tokens are checked against its keys.
    app.state.oidc = (
        OidcVerifier(settings.oidc_issuer, settings.oidc_audience, settings.oidc_leeway_s)
        if settings.oidc_issuer and settings.oidc_audience
        else None
    )
    install_error_handlers(app)
    app.state.access_refusals = access_cap()
    render = app.exception_handlers[ApiError]

    async def refused_or_not(request: Request, exc: Exception) -> Response:
        """A 403 is an audit event (service/http/refusals.py) before it is an answer."""
        if isinstance(exc, ApiError) and exc.status == 403:
            await run_in_threadpool(record_refusal, request, exc)
        answer = render(request, exc)  # the envelope's handler (service/errors.py), an async one
        return await answer if inspect.isawaitable(answer) else answer

    app.add_exception_handler(ApiError, refused_or_not)
    app.add_middleware(RateLimitMiddleware)  # inside the guard: it knows the caller
    app.add_middleware(GuardMiddleware)
    app.add_middleware(ShutdownMiddleware)  # inside RequestIdMiddleware (the last added runs first)
    app.add_middleware(RequestIdMiddleware)

    # The app's own list (a test may add a route to one app); the route objects are shared (route_table).
    app.router.routes.extend(route_table())
    api_docs.install(app)

    def openapi() -> JsonObject:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            components = schema.setdefault("components", {}).setdefault("schemas", {})

            def add(name: str, component: JsonObject) -> None:
                # Two models of one name would silently document one body for both routes. (One model's input
                # and output schemas may differ in defaults; the input one is kept, as before.)
                fields = set(components.get(name, component).get("properties", {}))
                if fields != set(component.get("properties", {})):
                    raise RuntimeError(f"two OpenAPI components named {name}")
                components[name] = component

            # Bodies read by hand (the score body is raw text or JSON): their schemas are added here.
            for body in (ScoreIn, AnalyzeIn, SuggestScoreIn):
                body_schema = body.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, component in body_schema.pop("$defs", {}).items():
                    add(name, component)
                add(body.__name__, body_schema)
            forbid_nul(schema)
            ratelimit.document(schema)
            api_docs.add_examples(schema)  # Try it out fills in a realistic body, not pattern noise
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend its document
    return app
