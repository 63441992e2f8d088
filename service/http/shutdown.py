"""Every request in flight at a stop gets an answer in the API's envelope.

On SIGTERM uvicorn stops accepting connections and gives the requests in flight its graceful timeout (the
shutdown grace), then cancels them: a request still running would get uvicorn's bare text/plain 500 and
its thread would go on working for no one. So `serve` calls `Shutdown.begin` as the stop starts: score
requests stop at once (pieces waiting for a turn) or at their next piece (service/domain/fair_share.py),
and `SHUTDOWN_MARGIN_S` before the grace ends, any request that has not started its answer is answered
503 `shutting_down` (retryable, `Retry-After: 1`: another process, or this one restarted, answers the
retry) and its task is cancelled. Nothing stored is lost: a write commits in one transaction, so a request
cancelled before its commit stored nothing and one after it has started its answer (left to finish).
"""

from __future__ import annotations

import asyncio
import logging
import threading

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import envelope

log = logging.getLogger("service")

#: Answered this long before uvicorn's graceful timeout (the grace, in whole seconds) cancels what is left.
SHUTDOWN_MARGIN_S = 1.0


class Shutdown:
    """One per app: whether the grace is over, and the requests waiting to hear it (each on its own loop)."""

    def __init__(self) -> None:
        self.over = False
        self._waiters: set[asyncio.Future[None]] = set()
        self._lock = threading.Lock()

    def waiter(self) -> asyncio.Future[None]:
        """A future of the running loop, done when the grace is over."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            if self.over:
                future.set_result(None)
            else:
                self._waiters.add(future)
        return future

    def discard(self, future: asyncio.Future[None]) -> None:
        with self._lock:
            self._waiters.discard(future)

    def begin(self, grace_s: float) -> None:
        """On the event loop as the stop starts: answer what is left `SHUTDOWN_MARGIN_S` before the grace."""
        asyncio.get_running_loop().call_later(max(0.0, grace_s - SHUTDOWN_MARGIN_S), self.now)

    def now(self) -> None:
        """Answer every request in flight that has not started its answer (the grace is over)."""
        with self._lock:
            self.over = True
            waiters, self._waiters = self._waiters, set()
        for future in waiters:
            future.get_loop().call_soon_threadsafe(_done, future)


def _done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def shutting_down(request_id: str) -> JSONResponse:
    return envelope(
        request_id,
        503,
        "shutting_down",
        "The service is stopping and did not finish this request: retry (another process answers). Nothing "
        "it would have stored was kept half-done.",
        retryable=True,
        headers={"Retry-After": "1"},
    )


class ShutdownMiddleware:
    """Inside RequestIdMiddleware (it needs the request's id)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        shutdown: Shutdown | None = getattr(scope["app"].state, "shutdown", None)
        if scope["type"] != "http" or shutdown is None:
            await self.app(scope, receive, send)
            return
        started = False

        async def send_started(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        waiter = shutdown.waiter()
        inner = asyncio.ensure_future(self.app(scope, receive, send_started))
        try:
            await asyncio.wait({inner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            inner.cancel()
            raise
        finally:
            shutdown.discard(waiter)
        if inner.done() or started:
            await inner  # its answer (or its error, for the envelope's middleware outside)
            return
        inner.cancel()
        try:
            await inner
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - its answer is the 503 below; the error was its own
            log.info("a request cancelled at the shutdown deadline ended with an error", exc_info=True)
        if started:  # it started answering while it was being cancelled: nothing more can be sent
            return
        request_id = scope.get("state", {}).get("request_id", "")
        log.info(
            "answered %s %s 503 shutting_down: the shutdown grace is over", scope["method"], scope["path"]
        )
        await shutting_down(request_id)(scope, receive, send)
