"""Refused authorisations in the audit log (docs/api.md, "Audit log"): every 403 `forbidden` a caller with a
valid credential is answered.

The event goes to the log of the namespace the request named (a model's, or the path's `namespace`) when the
caller belongs to it, so its owners see a colleague try what their role may not do; otherwise to the
service-wide stream, which the operator reads (a namespace's owners must not learn what outsiders try on it,
and an outsider's attempt on a private model is answered 404, never recorded as a 403 would reveal it). The
request was refused before it changed anything, so the event has its own transaction. A caller controls how
many come, so each API process records at most MAX_REFUSED_ACCESS_PER_CALLER a minute from one caller and
MAX_REFUSED_ACCESS from all; the rest are counted, and the next recorded one says how many went before it.
"""

from __future__ import annotations

import logging
import time

from fastapi import Request
from fastapi.routing import APIRoute
from sqlalchemy.exc import SQLAlchemyError
from starlette.routing import Match
from starlette.types import Scope

from core.contract import MAX_REFUSED_ACCESS, MAX_REFUSED_ACCESS_PER_CALLER, Action
from core.json_types import JsonObject
from service.context import Context
from service.domain.access import require_role
from service.errors import ApiError
from service.http.signins import RefusalCap
from service.store.api_keys import Principal
from service.store.audit import SERVICE, record
from service.store.db import transaction

log = logging.getLogger("service")


def access_cap() -> RefusalCap:
    """One per app: refused authorisations recorded this minute, per caller and in all."""
    return RefusalCap(MAX_REFUSED_ACCESS_PER_CALLER, MAX_REFUSED_ACCESS)


def _namespace(request: Request) -> str | None:
    params = request.path_params
    if isinstance(params.get("namespace"), str):
        return str(params["namespace"])
    handle = params.get("handle")
    return handle.split(".", 1)[0] if isinstance(handle, str) and "." in handle else None


def record_refusal(request: Request, exc: ApiError) -> None:
    """Record a 403 `forbidden` of a caller the guard identified (no credential, no record: that is 401)."""
    who = getattr(request.state, "principal", None)
    if exc.status != 403 or exc.code != "forbidden" or not isinstance(who, Principal):
        return
    ctx: Context = request.app.state.ctx
    cap: RefusalCap = request.app.state.access_refusals
    caller = f"person:{who.person_id}" if who.is_person else f"key:{who.key_id}"
    unrecorded = cap.admit(caller, time.time())
    if unrecorded is None:
        return
    route = request.scope.get("route")
    detail: JsonObject = {
        "method": request.method,
        "route": route.path_format if isinstance(route, APIRoute) else request.url.path,
        "scope": who.scope,
        "reason": exc.message,
    }
    namespace = exc.namespace or _namespace(request)
    if namespace is not None and who.owns(namespace):
        detail["role"] = who.role_in(namespace)
        if "handle" in request.path_params:
            detail["target"] = str(request.path_params["handle"])
    else:
        if namespace is not None:
            detail["namespace"] = namespace
        namespace = SERVICE
    if unrecorded:
        detail["unrecorded_before"] = unrecorded
    try:
        with transaction(ctx.sessions) as s:
            record(s, who, "access_refused", namespace, None, detail)
    except SQLAlchemyError:  # a full disk or a lost database must not turn the 403 into a 500
        log.warning("a refused request could not be recorded in the audit log", exc_info=True)


NEEDS_AUTHORING = "This operation needs an authoring key."

M = "/v1/models/{handle}"
#: The least a write route asks of the caller's role, known from its method and path alone: the guard refuses
#: a caller below it (403) before reading a byte of the body, so a large body meets the role check before the
#: size limit (413). The domain checks the whole rule (what the body asks, whose row it is); this table may
#: only ask less (tests/service/test_auth_matrix.py holds it to each operation's role). A route not named is
#: checked by its domain alone.
WRITE_ACTIONS: dict[tuple[str, str], Action] = {
    ("PATCH", M): "manage",
    ("DELETE", M): "manage",
    ("POST", M + "/reopen"): "manage",
    ("POST", M + "/traits"): "manage",
    ("PATCH", M + "/traits/{key}"): "manage",
    ("DELETE", M + "/traits/{key}"): "manage",
    ("POST", M + "/traits/discover"): "manage",
    ("POST", M + "/samples"): "label",
    ("PATCH", M + "/samples/{sample_id}"): "label",
    ("DELETE", M + "/samples/{sample_id}"): "label",
    ("POST", M + "/samples/synthesize"): "manage",
    ("POST", M + "/pool"): "manage",
    ("DELETE", M + "/pool"): "manage",
    ("DELETE", M + "/pool/{text_id}"): "manage",
    ("POST", M + "/pool/{text_id}/label"): "label",
    ("POST", M + "/pool/label"): "review",
    ("DELETE", M + "/pool/{text_id}/label"): "label",
    ("DELETE", M + "/pool/{text_id}/claim"): "label",
    ("PATCH", M + "/my-labels/{kind}/{label_id}"): "label",
    ("DELETE", M + "/my-labels/{kind}/{label_id}"): "label",
    ("DELETE", M + "/feedback/{label_id}"): "label",
    ("PUT", M + "/guidelines"): "manage",
    ("POST", M + "/guidelines/read"): "label",
    ("POST", M + "/assignments"): "manage",
    ("DELETE", M + "/assignments/{annotator}"): "manage",
    ("POST", M + "/assignments/{annotator}/reassign"): "manage",
    ("PUT", M + "/assignments/{annotator}/target"): "manage",
    ("POST", M + "/train"): "manage",
    ("POST", M + "/versions/{ref}"): "manage",
    ("DELETE", M + "/versions/{ref}"): "manage",
    ("POST", M + "/versions/{ref}/evaluate"): "manage",
    ("PUT", M + "/versions/{ref}/thresholds/{trait}"): "manage",
    ("DELETE", M + "/versions/{ref}/thresholds/{trait}"): "manage",
    ("POST", M + "/evaluation-set"): "manage",
    ("DELETE", M + "/evaluation-set"): "manage",
    ("POST", M + "/unsure"): "label",
    ("POST", M + "/comments"): "label",
    ("POST", M + "/runs/{run_id}/cancel"): "manage",
    ("POST", M + "/review"): "review",
    ("POST", M + "/labels/{label_id}/correct"): "review",
    ("POST", M + "/settle"): "review",
    ("POST", M + "/gold"): "review",
    ("POST", M + "/gold/promote"): "review",
    ("DELETE", M + "/gold/{gold_id}"): "review",
    ("DELETE", M + "/labels"): "manage",
    ("POST", M + "/labels/restore"): "manage",
    ("PUT", "/v1/namespaces/{namespace}/people/{member}"): "manage",
    ("DELETE", "/v1/namespaces/{namespace}/people/{member}"): "manage",
}


#: Creating a model names its namespace in the body, so WRITE_ACTIONS cannot say the role it needs; but a
#: caller who may manage none of its namespaces is refused whatever the body says.
CREATE = ("POST", "/v1/models")


def _create_refusal(who: Principal, routed: Scope) -> tuple[ApiError, Scope] | None:
    if who.scope != "authoring":
        return ApiError(403, "forbidden", NEEDS_AUTHORING), routed
    if not who.namespaces or any(who.may("manage", ns) for ns in who.namespaces):
        return None  # the domain decides with the body's namespace
    try:
        require_role(who, "manage", min(who.namespaces))
    except ApiError as exc:
        return exc, routed
    return None


def routed_scope(scope: Scope) -> Scope:
    """The request's scope with its route's path parameters (the scope as it is when no route serves it)."""
    for route in scope["app"].router.routes:
        match, child = route.matches(scope)
        if match == Match.FULL and isinstance(route, APIRoute):
            return {**scope, **child, "route": route}
    return scope


def early_refusal(scope: Scope, who: Principal) -> tuple[ApiError, Scope] | None:
    """The 403 a write route's caller gets whatever its body says (WRITE_ACTIONS), with the route's scope
    to record it in; None when the route decides with the body or the database (a namespace the caller is
    not in: 404 or 403 depends on the model's visibility)."""
    if scope.get("method") not in ("POST", "PUT", "PATCH", "DELETE"):
        return None
    for route in scope["app"].router.routes:
        match, child = route.matches(scope)
        if match != Match.FULL or not isinstance(route, APIRoute):
            continue
        action = WRITE_ACTIONS.get((scope["method"], route.path_format))
        routed: Scope = {**scope, **child, "route": route}
        if (scope["method"], route.path_format) == CREATE:
            return _create_refusal(who, routed)
        namespace = _namespace(Request(routed))
        if action is None or namespace is None or not who.owns(namespace):
            return None
        if who.scope != "authoring":
            return ApiError(403, "forbidden", NEEDS_AUTHORING, namespace=namespace), routed
        try:
            require_role(who, action, namespace)
        except ApiError as exc:
            return exc, routed
        return None
    return None
