"""The tests' hook into a running service's runs: `Checkpoints` (service/domain/needs.py) that call a function
at every engine progress report, set on the service's executor for the length of a `with`. The function gets
the engine's phase; raising a `BaseException` there stands in for the worker dying mid-run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from service.domain.needs import Checkpoints, Point
from service.runs.executor import Executor


@dataclass(frozen=True)
class OnProgress:
    hook: Callable[[str], None]
    then: Checkpoints  # the executor's own, told of every point after the hook

    def reached(self, point: Point, handle: str, what: str, attempt: int | None = None) -> None:
        if point == "engine_progress":
            self.hook(what)
        self.then.reached(point, handle, what, attempt)


@contextmanager
def on_progress(executor: Executor, hook: Callable[[str], None]) -> Iterator[None]:
    """`hook(phase)` at every engine progress report of the runs `executor` starts inside the block."""
    own = executor.checkpoints
    executor.checkpoints = OnProgress(hook, own)
    try:
        yield
    finally:
        executor.checkpoints = own
