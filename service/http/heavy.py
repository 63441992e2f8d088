"""Work that costs more than a lookup (scoring, suggestions, pool work, listings) ends when no one wants it,
and a caller's concurrent requests of it are bounded while others have theirs in flight.

One mechanism for all of them: the work asks `still_wanted` between its pieces (service/domain/fair_share.py
asks it too while a piece waits for its turn), which raises 503 `shutting_down` once the process stops and
499 `client_closed_request` once the client has gone away, so neither keeps the service computing for no
one. A disconnect is seen only by asking the event loop (`Request.is_disconnected`), so it is asked from the
request's thread. A caller's heavy requests other than scoring count one each against `heavy_per_caller`
(the admission of fair_share.FairShare, as scoring's tokens do): past it, while another caller has heavy work
in flight, 429 `rate_limited` with Retry-After; a caller alone is never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio.from_thread
from fastapi import Request

from service.domain.fair_share import Busy, StillWanted, Stopped
from service.domain.scoring import caller_of
from service.errors import ApiError
from service.store.api_keys import Principal


def stopping_refusal() -> ApiError:
    """What a request hears when its process stops before its work is done."""
    return ApiError(
        503,
        "shutting_down",
        "The service is stopping and did not do this request's work: retry (another process answers).",
        retryable=True,
        headers={"Retry-After": "1"},
    )


def busy_refusal(busy: Busy, what: str) -> ApiError:
    """A caller whose work in flight is at its bound while others have work too (never a caller alone)."""
    return ApiError(
        429,
        "rate_limited",
        f"This caller already has {busy.in_flight:,} {what} in flight (at most {busy.bound:,} while others "
        "have theirs too). Nothing was done; retry after Retry-After seconds.",
        retryable=True,
        headers={"Retry-After": "1"},
    )


@contextmanager
def answers(what: str) -> Iterator[None]:
    """The fair share's refusals as the API's answers (`what`: the unit of the caller's bound)."""
    try:
        yield
    except Stopped:
        raise stopping_refusal() from None
    except Busy as busy:
        raise busy_refusal(busy, what) from None


def asking(stopping: Callable[[], bool], disconnected: Callable[[], bool]) -> StillWanted:
    """A `still_wanted` of these two questions."""

    def still_wanted() -> None:
        # The stop flag first: once the process stops, its event loop may no longer answer `disconnected`.
        if stopping():
            raise stopping_refusal()
        if disconnected():
            raise ApiError(499, "client_closed_request", "The client went away before its work was done.")

    return still_wanted


def still_wanted_of(request: Request) -> StillWanted:
    """The request's `still_wanted`, to be asked from its thread (a sync route, `run_in_threadpool`)."""
    return asking(request.app.state.stopping.is_set, lambda: anyio.from_thread.run(request.is_disconnected))


#: The unit of `heavy_per_caller` in a refusal's message.
HEAVY = "suggestion, pool or listing requests"


@contextmanager
def heavy(request: Request, who: Principal) -> Iterator[StillWanted]:
    """Admit a heavy request (429 past the caller's bound while others have theirs) for as long as it runs,
    and give its `still_wanted`. From the request's thread."""
    still_wanted = still_wanted_of(request)
    still_wanted()
    with answers(HEAVY), request.app.state.heavy.admitted(caller_of(who), 1):
        yield still_wanted
