"""The one bounded wait of tests, benchmarks and the harness: poll a check until it holds or time runs out."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until[T](check: Callable[[], T | None], timeout: float, what: str, interval: float = 0.05) -> T:
    """Call `check` every `interval` seconds until it returns something truthy, and return that.

    After `timeout` seconds it raises `TimeoutError` naming `what` was awaited. A check may itself raise to
    stop the wait early (a process it waits on has exited): that error is not caught. The last check runs
    once the deadline has passed, so a wait never times out without looking at the end.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def holds(check: Callable[[], object], *errors: type[BaseException]) -> Callable[[], bool]:
    """`check` as a wait's condition that counts `errors` (a server not listening yet) as "not yet"."""

    def attempt() -> bool:
        try:
            return bool(check())
        except errors:
            return False

    return attempt
