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

import time

from fastapi import Request
from fastapi.routing import APIRoute

from core.contract import MAX_REFUSED_ACCESS, MAX_REFUSED_ACCESS_PER_CALLER
from core.json_types import JsonObject
from service.context import Context
from service.errors import ApiError
from service.http.signins import RefusalCap
from service.store.api_keys import Principal
from service.store.audit import SERVICE, record
from service.store.db import transaction


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
        "route": route.path_format if isinstance(route, APIRoute) else request.url.path[:200],
        "scope": who.scope,
        "reason": exc.message[:300],
    }
    namespace = exc.namespace or _namespace(request)
    if namespace is not None and who.owns(namespace):
        detail["role"] = who.role_in(namespace)
        if "handle" in request.path_params:
            detail["target"] = str(request.path_params["handle"])[:200]
    else:
        if namespace is not None:
            detail["namespace"] = namespace[:64]
        namespace = SERVICE
    if unrecorded:
        detail["unrecorded_before"] = unrecorded
    with transaction(ctx.sessions) as s:
        record(s, who, "access_refused", namespace, None, detail)
