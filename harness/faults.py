"""Fault injection for tests and benchmarks: `Checkpoints` (service/domain/needs.py) that hold chosen models
at a point of a run or request, so a test can kill a process at a known moment. Nothing in the service refers
to this module: an in-process test passes its hooks to `Context.build`, and a test that starts processes puts
`faults_env(hooks)` in their environment, which has Python run harness/faultsite/sitecustomize.py at the
start of each process the fleet starts, however deep (a worker child of `serve`, a local service of the
workbench, honcho's processes). There `install_from_env` sets the hooks as `Context.build`'s default once the
process imports `service.context`, without importing anything earlier (a `-m service` run from another
checkout still imports its own code).

$HARNESS_FAULTS is a JSON object; every hook names the models it applies to by handle prefix, so one set of
processes can serve ordinary models at full speed and slow down only the victims of a fault test:

    {"slow_run": {"handle_prefix": "acme.slow", "seconds": 3, "attempt": 1},
     "slow_samples_commit": {"handle_prefix": "acme.bulk", "seconds": 30, "release": "/tmp/t/go"}}

The hooks (the one list of them; docs/service.md links here):

- slow_run: a run sleeps at the engine's first progress report (claimed, heartbeating, nothing applied);
- slow_save: a training sleeps once its engine work is done, before the transaction that saves the version;
- slow_samples_commit: POST /samples sleeps after inserting its rows, before committing them;
- slow_feedback: score feedback sleeps after counting the buffer, before deciding on a retraining;
- slow_shard: a worker that claimed a shard of a training's embedding sleeps before embedding it (the
  training's own worker too; service/runs/shards.py).

A run or shard hook with `"attempt": N` sleeps in that attempt only (a retry after a kill then runs at
full speed). A hook with `"release": PATH` holds until the test creates that file, `seconds` being only its
bound: a test that needs a model busy for a while releases it when it is done, instead of waiting out a sleep
long enough for a slow machine. Each hook logs one line when it starts sleeping ("test hook: ...") so a test
can kill the process at that exact moment.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not at run time: the start-up hook must not import the service early
    from service.context import Context
    from service.domain.needs import Checkpoints, Point

ENV = "HARNESS_FAULTS"
SITE = Path(__file__).resolve().parent / "faultsite"
ROOT = Path(__file__).resolve().parents[1]
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
    release: str | None = None  # a file whose creation ends the hold early (`seconds` is then its bound)

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
                str(spec["release"]) if spec.get("release") is not None else None,
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
        if delay.release is None:
            time.sleep(delay.seconds)
            return
        deadline = time.monotonic() + delay.seconds
        while not Path(delay.release).exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # the test's file, looked for ten times a second


def faults_env(
    hooks: Mapping[str, Mapping[str, Any]], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables that give every Python process started with them (and their children) `hooks`:
    $HARNESS_FAULTS, and a PYTHONPATH (after `base`'s, default this process's) that leads Python to the
    start-up hook and this package."""
    before = (os.environ if base is None else base).get("PYTHONPATH", "")
    path = os.pathsep.join([str(SITE), str(ROOT), *([before] if before else [])])
    return {ENV: json.dumps(hooks), "PYTHONPATH": path}


def use(context: type[Context], checkpoints: Checkpoints) -> None:
    """Every `Context.build(settings)` of this process gets `checkpoints`."""
    build = context.build

    def with_hooks(settings: Any, checkpoints: Checkpoints = checkpoints) -> Context:
        return build(settings, checkpoints)

    context.build = staticmethod(with_hooks)  # type: ignore[method-assign]


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` once `name` has been imported, by whichever path finds it."""

    def __init__(self, name: str, then: Any) -> None:
        self.name, self.then = name, then

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self.then
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            then(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install_from_env() -> None:
    """The process's hooks from $HARNESS_FAULTS (harness/faultsite/sitecustomize.py calls this at start)."""
    hooks = TestHooks.parse(os.environ.get(ENV))
    if hooks.active:
        sys.meta_path.insert(0, _AfterImport("service.context", lambda module: use(module.Context, hooks)))
