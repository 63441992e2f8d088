"""harness/faults.py: the hooks parse as a test writes them, and a process started with `faults_env` has them
as its `Context.build`'s default, without the service imported before the process imports it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.faults import TestHooks, faults_env
from tests.support.processes import FreshPython

PROBE = """
import inspect, sys
early = "service" in sys.modules
from service.context import Context
hooks = inspect.signature(Context.build).parameters["checkpoints"].default
print(early, type(hooks).__name__, hooks.slow_run)
"""


def test_run_hooks_can_hold_one_attempt() -> None:
    hooks = TestHooks.parse('{"slow_save": {"handle_prefix": "a.", "seconds": 1, "attempt": 1}}')
    assert hooks.slow_save is not None and hooks.active and hooks.slow_run is None
    assert hooks.slow_save.applies("a.x", 1) and not hooks.slow_save.applies("a.x", 2)
    assert not hooks.slow_save.applies("b.x", 1)


def test_a_hook_with_a_release_file_holds_only_until_the_file_is_there(tmp_path: Path) -> None:
    """A released hold returns at once, however long its bound: the test decides when the model moves on."""
    go = tmp_path / "go"
    go.touch()
    hooks = TestHooks.parse(
        json.dumps({"slow_save": {"handle_prefix": "a.", "seconds": 600, "release": str(go)}})
    )
    assert hooks.slow_save is not None and hooks.slow_save.release == str(go)
    hooks.reached("version_saving", "a.x", "saving")  # would hold ten minutes without the file


def test_a_process_started_with_the_faults_env_builds_its_context_with_them(
    fresh_python: FreshPython,
) -> None:
    env = {**os.environ, **faults_env({"slow_run": {"handle_prefix": "acme.", "seconds": 1}})}
    out = fresh_python(PROBE, env=env)
    assert out.stdout.split(maxsplit=2) == [
        "False",
        "TestHooks",
        "Delay(handle_prefix='acme.', seconds=1.0, attempt=None, release=None)\n",
    ]
