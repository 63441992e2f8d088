"""Fault injection for the tests: the `Checkpoints` (service/domain/needs.py) that $SCORING_TEST_HOOKS asks
for, chosen once at process start (`from_env`). Nothing below the processes imports this module: production
code only tells its checkpoints where it is.

A JSON object; every hook names the models it applies to by handle prefix, so one set of processes can
serve ordinary models at full speed and slow down only the victims of a fault test:

    {"slow_run": {"handle_prefix": "acme.slow", "seconds": 3, "attempt": 1},
     "slow_samples_commit": {"handle_prefix": "acme.bulk", "seconds": 30}}

- slow_run: a run sleeps at the engine's first progress report (claimed, heartbeating, nothing applied);
- slow_save: a training sleeps once its engine work is done, before the transaction that saves the version;
- slow_samples_commit: POST /samples sleeps after inserting its rows, before committing them;
- slow_feedback: score feedback sleeps after counting the buffer, before deciding on a retraining;
- slow_shard: a worker that claimed a shard of a training's embedding sleeps before embedding it (the
  training's own worker too; service/runs/shards.py).

A run or shard hook with `"attempt": N` sleeps in that attempt only (a retry after a kill then runs at
full speed). Each hook logs one line when it starts sleeping ("test hook: ...") so a test can kill the
process at that exact moment. Test mode only: refused unless the embedder is the test embedder `hashing`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

from service.config.settings import Settings
from service.domain.needs import UNWATCHED, Checkpoints, Point

ENV = "SCORING_TEST_HOOKS"
log = logging.getLogger("service.testhooks")

#: Each hook and the checkpoint it holds.
POINTS: dict[str, Point] = {
    "slow_run": "run_started",
    "slow_save": "version_saving",
    "slow_samples_commit": "samples_committing",
    "slow_feedback": "feedback_counted",
    "slow_shard": "shard_claimed",
}


@dataclass(frozen=True)
class Delay:
    handle_prefix: str
    seconds: float
    attempt: int | None = None  # run hooks: only in this attempt

    def applies(self, handle: str, attempt: int | None = None) -> bool:
        if self.attempt is not None and attempt is not None and attempt != self.attempt:
            return False
        return handle.startswith(self.handle_prefix)


@dataclass(frozen=True)
class TestHooks:
    """Checkpoints that sleep where a hook applies, announcing it first."""

    __test__ = False  # not a pytest class

    slow_run: Delay | None = None
    slow_save: Delay | None = None
    slow_samples_commit: Delay | None = None
    slow_feedback: Delay | None = None
    slow_shard: Delay | None = None

    @property
    def active(self) -> bool:
        return any(getattr(self, name) is not None for name in POINTS)

    @classmethod
    def parse(cls, text: str | None) -> TestHooks:
        if not text or not text.strip():
            return cls()
        raw = json.loads(text)
        if not isinstance(raw, dict) or set(raw) - set(POINTS):
            raise ValueError(f"{ENV}: expected an object of {', '.join(sorted(POINTS))}")
        hooks = {
            name: Delay(
                str(spec["handle_prefix"]),
                float(spec["seconds"]),
                int(spec["attempt"]) if spec.get("attempt") is not None else None,
            )
            for name, spec in raw.items()
        }
        return cls(**hooks)

    def reached(self, point: Point, handle: str, what: str, attempt: int | None = None) -> None:
        # A point no hook holds (a run's every progress report) passes at full speed.
        delay: Delay | None = next((getattr(self, n) for n, p in POINTS.items() if p == point), None)
        if delay is None or not delay.applies(handle, attempt):
            return
        log.warning("test hook: %s of %s sleeping %.1f s", what, handle, delay.seconds)
        for handler in logging.getLogger().handlers:
            handler.flush()
        time.sleep(delay.seconds)


def from_env(settings: Settings) -> Checkpoints:
    """The process's checkpoints: the hooks of $SCORING_TEST_HOOKS, else none. ValueError when it is set for
    a process that is not a test's (its embedder is not `hashing`) or malformed."""
    hooks = TestHooks.parse(settings.test_hooks)
    if not hooks.active:
        return UNWATCHED
    if settings.embedder != "hashing":
        raise ValueError(f"{ENV} is for tests only: it needs the test embedder 'hashing'")
    return hooks
