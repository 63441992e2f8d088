"""The scoring limiter: scoring, Perspective's routes and the reads sent as POST (suggestions, previews) take
their tokens here, never from the database, so the hot path writes nothing and scores on a full disk.

It is the `limits` package's moving window: at most `amount` requests of one caller in any `window` seconds,
exact. `window` is the burst's time at the configured rate (`burst / rate`, a whole second at least) and
`amount` the rate times it, so a caller gets the burst at once and the rate over any longer stretch.
Scoring's work is counted beside it, in characters of the texts scored, per caller in all its namespaces:
the same package's sliding window counter over the budget's window (`SCORING_SCORE_CHARS_BURST /
SCORING_SCORE_CHARS_PER_S`), since its charge is one addition whatever the characters (the moving window
keeps an entry per unit counted). Where the tokens are kept (docs/api.md, "Rate limits and quotas"):

- a Redis queue (`SCORING_QUEUE_URL=redis://…`): on that Redis, one window per caller for the whole fleet;
- otherwise in this process's memory, exact for one process. `SCORING_API_PROCESSES` API processes without
  Redis each keep a share (`amount / processes`), so a caller spread over the fleet gets the configured rate
  in all; one caller sent to one process only gets that process's share.

Writes keep the database's token buckets (service/store/rate_limits.py): a write touches the database anyway,
and the buckets are then exact across any fleet.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass

from limits import RateLimitItemPerSecond
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage, Storage
from limits.strategies import MovingWindowRateLimiter, SlidingWindowCounterRateLimiter

from service.config.settings import Settings

log = logging.getLogger("service")


class SweptMemoryStorage(MemoryStorage):
    """`limits`' memory storage, its expired entries swept once a second rather than by a new timer thread
    every 10 ms of traffic (about 0.2 ms of CPU a request at 500 requests a second, measured: a tenth of a
    cached score's). The moving window's answers read only its entries' times, so an entry kept up to a
    second past its window changes none; the sweep only returns the memory."""

    SWEEP_S = 1.0

    # The storage's private hook, named as Python mangles it: every acquire calls it.
    def _MemoryStorage__schedule_expiry(self) -> None:
        if not self.timer.is_alive():
            self.timer = threading.Timer(self.SWEEP_S, self._MemoryStorage__expire_events)  # type: ignore[attr-defined]  # the storage's own sweep
            self.timer.daemon = True
            self.timer.start()


@dataclass(frozen=True)
class Window:
    """At most `amount` requests in any `seconds`."""

    amount: int
    seconds: int

    @property
    def per_s(self) -> float:
        return self.amount / self.seconds


def window_of(per_s: float, burst: int, processes: int = 1) -> Window:
    """The window of a rate and burst, this process's share of it when `processes` share it."""
    seconds = max(1, math.ceil(burst / per_s))
    return Window(max(1, round(per_s * seconds / processes)), seconds)


class ScoreLimiter:
    """One per API process (created with its app)."""

    def __init__(self, settings: Settings) -> None:
        url = settings.queue_url or ""
        self.shared = bool(url)  # settings.check: a queue URL is Redis's
        self.processes = 1 if self.shared else settings.api_processes
        self.window = (
            window_of(settings.score_rate_per_s, settings.score_burst, self.processes)
            if settings.score_rate_per_s > 0
            else None
        )
        storage: Storage = (
            RedisStorage(_limits_url(url), wrap_exceptions=True) if self.shared else SweptMemoryStorage()
        )
        self._limiter = MovingWindowRateLimiter(storage)
        self._item = RateLimitItemPerSecond(self.window.amount, self.window.seconds) if self.window else None
        # Scoring's work: characters per caller, in all its namespaces.
        self.work = (
            window_of(settings.score_chars_per_s, settings.score_chars_burst, self.processes)
            if settings.score_chars_per_s > 0
            else None
        )
        self.request_chars = settings.score_request_chars  # one request's characters; 0: no cap
        self._work_limiter = SlidingWindowCounterRateLimiter(storage)
        self._work_item = RateLimitItemPerSecond(self.work.amount, self.work.seconds) if self.work else None
        self._lock = threading.Lock()
        self._down = False  # the shared store failed last time (logged once until it answers again)

    def describe(self) -> str:
        """The startup log's line: what a caller gets from this process and where it is counted."""
        if self.window is None and self.work is None:
            return "scoring rate limit: off"
        where = (
            "shared by the fleet on Redis"
            if self.shared
            else f"in this process's memory, its share of {self.processes} API process(es) without Redis"
        )
        w, c = self.window, self.work
        requests = f"{w.amount} requests in any {w.seconds} s" if w else "requests not limited"
        work = f"{c.amount} characters in any {c.seconds} s" if c else "characters not limited"
        return f"scoring rate limit: {requests} per caller and namespace; {work} per caller; {where}"

    def take(self, key: str) -> float:
        """Take a token of `key`: 0.0 when taken (or not limited), else the seconds until one is back."""
        if self._item is None:
            return 0.0
        try:
            if self._limiter.hit(self._item, key):
                self._mark(down=False)
                return 0.0
            reset, _ = self._limiter.get_window_stats(self._item, key)
        except StorageError as exc:
            # Scoring is a read: a limiter that cannot be reached lets it through rather than refusing all.
            self._mark(down=True, why=exc)
            return 0.0
        self._mark(down=False)
        return max(reset - time.time(), 0.001)

    def take_work(self, key: str, chars: int) -> float:
        """Charge `chars` characters of scoring to `key`: 0.0 when charged (or not limited), else the seconds
        until the budget holds them (nothing charged). A request larger than the whole budget is charged the
        whole budget: it waits for an untouched window rather than never passing."""
        if self._work_item is None or self.work is None:
            return 0.0
        cost = max(1, min(chars, self.work.amount))
        try:
            if self._work_limiter.hit(self._work_item, key, cost=cost):
                self._mark(down=False)
                return 0.0
            _, remaining = self._work_limiter.get_window_stats(self._work_item, key)
        except StorageError as exc:
            self._mark(down=True, why=exc)
            return 0.0
        self._mark(down=False)
        # The budget comes back at its rate: the characters it lacks, at that rate (a window at most).
        return min(max((cost - remaining) / self.work.per_s, 0.001), float(self.work.seconds))

    def _mark(self, *, down: bool, why: BaseException | None = None) -> None:
        if down == self._down:
            return
        with self._lock:
            if down and not self._down:
                log.warning("scoring rate limit: Redis unreachable (%s); not limiting until it answers", why)
            elif not down and self._down:
                log.info("scoring rate limit: Redis reachable again")
            self._down = down


def _limits_url(queue_url: str) -> str:
    """The queue's Redis in the `limits` package's spelling (a socket is `redis+unix://`)."""
    return "redis+" + queue_url if queue_url.startswith("unix://") else queue_url
