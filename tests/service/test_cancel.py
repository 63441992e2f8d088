"""Cancelling a run (docs/api.md "Cancel a run"): a queued or running training, retune, discover, synthesize
or evaluation ends `cancelled`, its model back where the run started with nothing of it applied, its worker
free for the next run, and neither a worker nor a restart takes it again; a busy model can then be deleted."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from core.embedders.hashing import HashingEmbedder
from harness.waiting import wait_until
from service.domain.needs import Checkpoints, Point
from service.runs.attempt import Watched
from service.runs.heartbeat import ClaimLost, Heartbeat
from service.store import ledger
from service.store.db import transaction
from service.store.schema import Run
from tests.support import factories
from tests.support.service import Svc, check, error_code, train_ready, wait_settled

H = "acme.cancel"
EVAL_ITEMS = [
    {"trait": "formality", "text": "We should be grateful for your reply.", "quality": 1},
    {"trait": "formality", "text": "lol whatever dude", "quality": 0},
]


PROGRESS: tuple[Point, ...] = ("engine_progress", "run_progress")


@dataclass
class Hold:
    """Checkpoints that hold one model's run at its first progress report (claimed, heartbeating, nothing
    applied) until `release` is set: a run caught running, as a long one is."""

    handle: str
    then: Checkpoints
    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def reached(self, point: Point, handle: str, what: str, attempt: int | None = None) -> None:
        if point in PROGRESS and handle == self.handle and not self.release.is_set():
            self.started.set()
            self.release.wait(60)
        self.then.reached(point, handle, what, attempt)


def start(svc: Svc, kind: str, handle: str = H) -> str:
    c, h = svc.client, svc.author
    url, body = {
        "train": ("train", {"effort": "low"}),
        "retune": ("train", {"effort": "low", "reoptimize_params": True}),
        "discover": ("traits/discover", {"effort": "low"}),
        "synthesize": ("samples/synthesize", {"effort": "low"}),
        "evaluate": ("versions/v1/evaluate", None),
    }[kind]
    started = check(c.post(f"/v1/models/{handle}/{url}", json=body, headers=h), 202)
    return str(started["run_id"])


def prepare(svc: Svc, kind: str, run_now: Callable[[str], None]) -> dict[str, Any]:
    """The model a run of `kind` starts from: a draft with data, or (retune, evaluate) a trained one."""
    c, h = svc.client, svc.author
    factories.model(svc, H)
    if kind in ("retune", "evaluate"):
        run_now(start(svc, "train"))
        assert wait_settled(c, H, h)["state"] == "ready"
    if kind == "evaluate":
        check(c.post(f"/v1/models/{H}/evaluation-set", json={"items": EVAL_ITEMS}, headers=h), 201)
    return model_view(svc)


def model_view(svc: Svc) -> dict[str, Any]:
    """What a cancelled run must leave as it was: the state, the serving version, traits, samples."""
    c, h = svc.client, svc.author
    model = check(c.get(f"/v1/models/{H}", headers=h), 200)
    traits = check(c.get(f"/v1/models/{H}/traits", headers=h), 200)
    return {
        "state": model["state"],
        "version_no": model["version_no"],
        "sample_count": model["sample_count"],
        "traits": sorted(t["key"] for t in traits["traits"]),
        "evaluation": c.get(f"/v1/models/{H}/versions/v1/evaluation", headers=h).status_code,
    }


def run_row(svc: Svc, run_id: str) -> tuple[str, int]:
    with transaction(svc.ctx.reads) as s:
        run = s.get(Run, run_id)
        assert run is not None
        return run.status, run.attempts


def cancel(svc: Svc, run_id: str, headers: dict[str, str] | None = None) -> Any:
    return svc.client.post(f"/v1/models/{H}/runs/{run_id}/cancel", headers=headers or svc.author)


KINDS = ["train", "retune", "discover", "synthesize", "evaluate"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_queued_run_is_cancelled_and_never_taken_again(idle_svc: Svc, kind: str) -> None:
    svc = idle_svc
    before = prepare(svc, kind, svc.ctx.executor.execute)
    run_id = start(svc, kind)
    assert check(svc.client.get(f"/v1/models/{H}", headers=svc.author), 200)["state"] == "busy"

    model = check(cancel(svc, run_id), 200)
    assert model["state"] == before["state"]
    op = model["last_operation"]
    assert (op["run_id"], op["status"], op["error"]) == (run_id, "cancelled", None)
    assert op["finished_at"] is not None and op["progress"]["phase"] == "cancelled"
    assert before["state"] in op["progress"]["message"]

    # A worker handed its message, the recovery sweep and a restart's re-enqueue all leave it alone.
    svc.ctx.executor.execute(run_id)
    svc.ctx.recover()
    with transaction(svc.ctx.sessions) as s:
        assert run_id not in ledger.queued_ids(s)
    assert run_row(svc, run_id) == ("cancelled", 0)
    assert model_view(svc) == before

    # A repeat changes nothing; the same run may be started anew (a cancelled run is no duplicate).
    again = check(cancel(svc, run_id), 200)
    assert again["last_operation"] == op and again["state"] == before["state"]
    rerun = start(svc, kind)
    assert rerun != run_id
    svc.ctx.executor.execute(rerun)
    assert run_row(svc, rerun) == ("succeeded", 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_running_run_is_cancelled_and_its_worker_takes_the_next_run(
    svc: Svc, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="service.runs")
    before = prepare(svc, kind, lambda run_id: None)  # the service's own worker runs it
    hold = Hold(H, svc.ctx.executor.checkpoints)
    svc.ctx.executor.checkpoints = hold
    try:
        run_id = start(svc, kind)
        assert hold.started.wait(60), "the run never started"
        assert run_row(svc, run_id) == ("running", 1)

        model = check(cancel(svc, run_id), 200)
        assert model["state"] == before["state"]
        assert model["last_operation"]["status"] == "cancelled"
    finally:
        hold.release.set()  # the worker goes on to its next progress report, finds the claim gone and stops

    # One worker thread: another model's training completes only once the cancelled run let go of it.
    factories.model(svc, "acme.next")
    train_ready(svc.client, svc.author, "acme.next")
    # (The next run's own claim may outlive its model's `ready` by a moment: its worker lets go after its
    # last write, so only the cancelled run's claim is asserted gone.)
    assert run_id not in svc.ctx.executor.claims()
    assert run_row(svc, run_id) == ("cancelled", 1)
    assert model_view(svc) == before  # nothing of the run applied: no version, trait or sample
    assert any(run_id in r.getMessage() and "claim was lost" in r.getMessage() for r in caplog.records)
    svc.ctx.recover()  # a sweep (as after a restart) does not take it again
    assert run_row(svc, run_id) == ("cancelled", 1)


def test_a_busy_model_is_deleted_after_its_run_is_cancelled(idle_svc: Svc) -> None:
    svc, c, h = idle_svc, idle_svc.client, idle_svc.author
    factories.model(svc, H)
    run_id = start(svc, "train")
    for params in (None, {"purge": "true"}):
        refused = c.delete(f"/v1/models/{H}", params=params, headers=h)
        assert error_code(refused, 409) == "model_busy"
        assert refused.headers["X-Run-Id"] == run_id
        assert f"client.cancel('{H}', '{run_id}')" in refused.json()["error"]["message"]
    check(cancel(svc, run_id), 200)
    assert check(c.delete(f"/v1/models/{H}", params={"purge": "true"}, headers=h), 200)["deleted"] is True
    check(c.post("/v1/models", json={"handle": H}, headers=h), 201)  # the handle is free again


def test_a_finished_or_unknown_run_is_refused_with_the_reason(svc: Svc) -> None:
    c, h = svc.client, svc.author
    factories.model(svc, H)
    run_id = start(svc, "train")
    assert wait_settled(c, H, h)["state"] == "ready"
    finished = cancel(svc, run_id)
    assert error_code(finished, 409) == "run_finished"
    assert "already succeeded" in finished.json()["error"]["message"]
    assert check(c.get(f"/v1/models/{H}", headers=h), 200)["last_operation"]["status"] == "succeeded"

    factories.model(svc, "acme.other-model")
    other = start(svc, "train", "acme.other-model")
    for unknown in ("run_" + "0" * 32, other, "not-a-run-id"):  # another model's run is not this model's
        assert error_code(cancel(svc, unknown), 404) == "run_not_found"
    # Whoever may not start a run may not cancel one (the whole matrix: test_auth_matrix.py).
    assert error_code(cancel(svc, run_id, headers=svc.scorer), 403) == "forbidden"
    assert error_code(cancel(svc, run_id, headers=svc.other), 404) == "model_not_found"


class Counting:
    """The hashing embedder, counting the texts it was asked to embed."""

    def __init__(self) -> None:
        self.base = HashingEmbedder()
        self.id, self.dim, self.texts = self.base.id, self.base.dim, 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.base.encode(texts)


def test_a_trainings_embedding_stops_between_chunks_once_cancelled(idle_svc: Svc) -> None:
    svc = idle_svc
    factories.model(svc, H)
    run_id = start(svc, "train")
    with transaction(svc.ctx.sessions) as s:
        assert ledger.claim(s, run_id) is not None  # a worker's claim, attempt 1
    texts = [
        f"Text number {i} of a long training, {'word ' * (i % 7)}." for i in range(3 * Watched.CHUNK + 5)
    ]
    with Heartbeat(svc.ctx.sessions, run_id, 1, interval_s=0.05) as beat:
        counting = Counting()
        # Not cancelled: every text embedded, in chunks, each vector in its text's row.
        assert np.allclose(Watched(counting, beat).encode(texts), counting.base.encode(texts))
        check(cancel(svc, run_id), 200)
        wait_until(beat.lost.is_set, 30, "the heartbeat to find the claim gone")
        counting.texts = 0
        with pytest.raises(ClaimLost):
            Watched(counting, beat).encode(texts)
        assert counting.texts == 0  # stopped before the next chunk
