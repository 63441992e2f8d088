"""A run's bookkeeping (claim, heartbeats, progress, the recovery sweep) never fails on a busy database
under a sustained import, and while a writer legitimately holds SQLite's write lock longer than
the busy timeout, the run is heartbeated, finishes in its first attempt, and no `database is locked`,
failed heartbeat or failed recovery reaches the log."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.faults import Delay, TestHooks
from harness.waiting import wait_until
from service.store.db import transaction
from service.store.schema import Run
from tests.support.service import TRAITS, check, running, samples, wait_settled

# The training sleeps this long (claimed, heartbeating) at its first progress report: long enough that the
# importer has stopped before the run saves its version (that write is not the bookkeeping's, and a loaded
# machine's slow batches would otherwise hold the lock past this test's short busy timeout when it comes).
SLOW_RUN_S = 12.0
HOLD_S = 1.5  # POST /samples on acme.bulk-held* keeps its write transaction open this long before committing
# A failed claim is Huey's "Unhandled exception in task"; the sweep re-queues a run whose heartbeat is stale.
# Not a problem: a queued run "enqueued again" because it "waited longer than the heartbeat timeout" (on a
# busy 2-core machine the worker may claim it late; the message is a duplicate and the run still counts one
# attempt, which the test asserts).
PROBLEMS = (
    "database is locked",
    "heartbeat failed",
    "run recovery failed",
    "Unhandled exception",
    "re-queued run",
)


def bookkeeping_problems(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if any(p in r.getMessage() for p in PROBLEMS)]


def running_now(c: Any, h: dict[str, str]) -> bool:
    operation = check(c.get("/v1/models/acme.slow", headers=h), 200)["last_operation"]
    return bool(operation["status"] == "running")


def test_a_run_is_heartbeated_through_a_sustained_import_and_a_long_held_lock(
    tmp_path: Path, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    hooks = TestHooks(
        slow_run=Delay("acme.slow", SLOW_RUN_S), slow_samples_commit=Delay("acme.bulk-held", HOLD_S)
    )
    settings = {
        "database_url": database_url,
        "heartbeat_interval_s": 0.2,
        # A heartbeat kept out for longer would have the run recovered (and "re-queued run" logged).
        "heartbeat_timeout_s": 10.0,
        "recovery_interval_s": 0.2,
        "lock_timeout_s": 0.5,  # SQLite gives up on the lock long before the held write commits
    }
    with running(tmp_path, checkpoints=hooks, **settings) as svc:
        c, h = svc.client, svc.author
        for handle in ("acme.slow", "acme.bulk", "acme.bulk-held"):
            check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
            check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=h), 201)
        check(c.post("/v1/models/acme.slow/samples", json={"samples": samples()}, headers=h), 201)
        run_id = check(c.post("/v1/models/acme.slow/train", json={"effort": "low"}, headers=h), 202)["run_id"]

        done = threading.Event()
        statuses: list[int] = []

        def import_while_training() -> None:
            i = 0
            while not done.is_set():  # batches of 500 back to back, as a big import sends them
                batch = [
                    {"trait": "formality", "text": f"Imported text {i + j}.", "quality": float(j % 2)}
                    for j in range(500)
                ]
                statuses.append(
                    c.post("/v1/models/acme.bulk/samples", json={"samples": batch}, headers=h).status_code
                )
                i += 500

        importer = threading.Thread(target=import_while_training)
        importer.start()
        try:
            wait_until(lambda: running_now(c, h), 60, "the run to start")
            # A writer that holds the lock past the busy timeout while the run heartbeats: it is waited out.
            held = [{"trait": "formality", "text": "Held for a while.", "quality": 1.0}]
            for _ in range(20):  # it waits 0.5 s for the lock the importer takes back to back: retried, as
                # its 503 says (retryable), until it holds the lock itself
                answer = c.post("/v1/models/acme.bulk-held/samples", json={"samples": held}, headers=h)
                if answer.status_code != 503:
                    break
            check(answer, 201)
        finally:
            done.set()  # before the run saves its version (its own write waits at most the busy timeout)
            importer.join(timeout=120)
        model = wait_settled(c, "acme.slow", h, timeout=120)
        assert model["state"] == "ready", model["last_operation"]
        assert model["last_operation"]["run_id"] == run_id
        with transaction(svc.ctx.reads) as s:
            run = s.get(Run, run_id)
            assert run is not None and (run.status, run.attempts) == ("succeeded", 1)  # never taken for stale
        assert statuses and set(statuses) <= {201, 503}
    assert bookkeeping_problems(caplog) == []
