"""What every call shares: the connection, retries, errors, paging and small request helpers."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import unquote

import httpx
from pydantic import BaseModel

from core.client import errors, retry
from core.client.models import (
    Page,
    RunRef,
)
from core.client.retry import Safety
from core.config import core_settings, env_name
from core.json_types import JsonObject

ENV_URL = env_name("api_url")
ENV_KEY = env_name("api_key")

_ModelT = TypeVar("_ModelT", bound=BaseModel)

try:
    from importlib.metadata import version as _pkg_version

    _USER_AGENT = f"scoring-workbench-client/{_pkg_version('scoring-workbench')}"
except Exception:  # not installed as a distribution (plain checkout)
    _USER_AGENT = "scoring-workbench-client"


def normalize_base_url(url: str) -> str:
    """Strip trailing slashes and add `/v1` when the URL names only the server."""
    url = url.strip().rstrip("/")
    if not url:
        raise ValueError("base_url is empty")
    if not url.endswith("/v1"):
        url += "/v1"
    return url


def _require_name(name: str, what: str) -> None:
    if not str(name).strip():
        raise ValueError(f"The {what} is empty: enter a name.")


def _clean(fields: Mapping[str, object]) -> JsonObject:
    return {k: v for k, v in fields.items() if v is not None}


class ClientBase:
    """Typed client for the scoring service.

    The connection and its retries; the calls live in `core.client.calls` (docs/client.md)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        url = base_url or core_settings().api_url
        if not url:
            raise ValueError(
                f"no service URL: pass base_url or set {ENV_URL} "
                "(or start one with core.start_local_service())"
            )
        self.base_url = normalize_base_url(url)
        self.api_key = api_key if api_key is not None else core_settings().api_key
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        self.timeout = timeout
        default_headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if self.api_key:
            default_headers["Authorization"] = f"Bearer {self.api_key}"
        default_headers.update(headers or {})
        self._http = httpx.Client(
            base_url=self.base_url + "/",
            headers=default_headers,
            timeout=httpx.Timeout(timeout),
            transport=transport,
        )
        self._sleep: Callable[[float], None] = retry.sleep  # replaceable to observe delays in tests
        # What to add to a TransportError's message (`LocalService.client()`: how to restart the service).
        self.unreachable_hint: Callable[[], str | None] | None = None
        # The service's embedding cache when it runs on this machine (`LocalService.client()` sets it): checks
        # run here (`flags`) read the vectors it has instead of embedding every text again.
        self.embedding_cache: Path | None = None

    def close(self) -> None:
        self._http.close()

    def __del__(self) -> None:
        # A notebook cell run again (`client = svc.client()`) drops the client it made before: its pooled
        # connections close with it instead of lingering until the kernel exits (a ResourceWarning each).
        http = getattr(self, "_http", None)
        if http is not None:
            with contextlib.suppress(Exception):
                http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, api_key={'set' if self.api_key else 'none'})"

    def request(
        self,
        method: str,
        path: str,
        *,
        safety: Safety = Safety.IDEMPOTENT,
        params: Mapping[str, object] | None = None,
        json: object = None,
        content: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """Send one logical call (same `X-Request-Id` on every attempt); raise `ApiError` on >= 300.
        `timeout`: this call's, in seconds, for a call whose answer takes as long as the work it sends (else
        the client's).

        A 3xx is an error too (`UnexpectedRedirectError`): redirects are not followed, and the body of one is
        never the result the caller asked for.
        """
        if self._http.is_closed:
            raise errors.ClientClosedError(
                f"{method} {self.base_url}{path}: this client is closed (its `with` block ended or `close()` "
                "was called): make a new one"
            )
        request_id = f"req_{uuid.uuid4().hex}"
        send_headers = {"X-Request-Id": request_id, **(headers or {})}
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    method,
                    path.lstrip("/"),
                    params=_clean(params or {}),
                    json=json,
                    content=content,
                    headers=send_headers,
                    timeout=httpx.Timeout(timeout) if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TransportError as exc:
                if attempt < self.retries and retry.should_retry_exception(exc, safety):
                    self._sleep(retry.backoff_delay(attempt, self.backoff))
                    attempt += 1
                    continue
                hint = self.unreachable_hint() if self.unreachable_hint is not None else None
                raise errors.TransportError(
                    f"{method} {self.base_url}{path}: {type(exc).__name__}: {exc} "
                    f"(after {attempt + 1} attempt{'s' if attempt else ''})" + (f"; {hint}" if hint else ""),
                    request_id=request_id,
                ) from exc
            if response.status_code < 300:
                return response
            if attempt < self.retries and retry.should_retry_status(response.status_code, safety, response):
                delay = retry.backoff_delay(attempt, self.backoff)
                after = retry.retry_after_seconds(response)
                if after is None or after <= retry.MAX_RETRY_AFTER:
                    self._sleep(max(delay, after or 0.0))
                    attempt += 1
                    continue
            raise _hinted(errors.error_from_response(response, request_id), path)

    def _get(self, path: str, params: Mapping[str, object] | None = None) -> Any:
        return self.request("GET", path, params=params).json()  # Any: the answer's JSON, read by its model

    def _paginate(self, fetch: Callable[[str | None], Page[_ModelT]]) -> Iterator[_ModelT]:
        cursor: str | None = None
        while True:
            page = fetch(cursor)
            yield from page.items
            if not page.next_cursor or not page.items:
                return
            cursor = page.next_cursor

    @staticmethod
    def _run_ref(response: httpx.Response) -> RunRef:
        body = response.json()
        return RunRef.model_validate({**body, "status_code": response.status_code})


def _hinted(exc: errors.ApiError, path: str) -> errors.ApiError:
    """A model not found under a handle without its namespace says what a handle is; a refusal because the
    model is archived says how to start over."""
    parts = path.strip("/").split("/")
    missing_namespace = len(parts) > 1 and parts[0] == "models" and "." not in parts[1]
    if isinstance(exc, errors.NotFoundError) and missing_namespace:
        name = unquote(parts[1])
        exc.message += (
            f" (a handle is `<namespace>.<name>`, e.g. 'local.{name}'; "
            f"`LocalService.handle({name!r})` makes one for the local service)"
        )
        exc.args = (str(exc),)
    elif exc.code == "model_archived" and len(parts) > 1 and parts[0] == "models":
        exc.message += archived_hint(unquote(parts[1]))
        exc.args = (str(exc),)
    return exc


def archived_hint(handle: str) -> str:
    """What to do about an archived model: nothing brings it back (the API has no unarchive), so the way on
    is to delete it for good or to take another handle."""
    return (
        f" ({handle} was deleted (archived): it stays readable and keeps its handle taken; "
        f"`client.delete_model({handle!r}, purge=True)` deletes it and all it stored for good, so the "
        "handle can be created again, or use another handle)"
    )


def _version_ref(version: str | int) -> str:
    return f"v{version}" if isinstance(version, int) else version


def _dump(model: type[BaseModel], item: BaseModel | Mapping[str, object]) -> JsonObject:
    obj = item if isinstance(item, model) else model.model_validate(item)
    return obj.model_dump(exclude_none=True)
