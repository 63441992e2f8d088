"""Two API processes and two worker processes on one database (SQLite file or PostgreSQL), over loopback:
concurrency (runs execute once, one of two identical discovers gets 409, concurrent imports lose nothing)
and faults (kill -9 a worker mid-training or holding a shard of a training's embedding, kill -9 an API
mid-import, SIGTERM a worker mid-run, restart everything). The fleet is shared by the module's tests; each
uses its own models."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from core.contract import trait_key
from core.embedders import get_embedder
from core.engine import train
from core.engine.types import Sample, TraitSpec
from harness.fleet import Fleet, ServiceProcess
from harness.waiting import wait_until
from service.store.db import make_engine
from service.store.schema import Model, Run, RunShard, SampleRow, Version
from tests.support.fleet import (
    BULK_PREFIX,
    HEARTBEAT_TIMEOUT_S,
    SHARD_HOLD_S,
    SHARD_PREFIX,
    SLOW_PREFIX,
    Running,
)
from tests.support.service import TRAITS, check, samples

SETTLE_S = 90.0  # upper bound for any run to finish in these tests (they take a few seconds)


@contextmanager
def database(fleet: Fleet) -> Iterator[Engine]:
    engine = make_engine(fleet.database)
    try:
        yield engine
    finally:
        engine.dispose()


def make_model(c: httpx.Client, handle: str, *, data: bool = True) -> None:
    check(c.post("/v1/models", json={"handle": handle}), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}), 201)
    if data:
        check(c.post(f"/v1/models/{handle}/samples", json={"samples": samples()}), 201)


def settled(c: httpx.Client, handle: str, timeout: float = SETTLE_S) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        model = check(c.get(f"/v1/models/{handle}"), 200)
        return None if model["state"] == "busy" else model

    # Each poll is a request the API serves (under coverage): 0.25 s costs a few times less CPU than 0.1 s,
    # and a run's end is still seen within a quarter second.
    return wait_until(done, timeout, f"{handle} to settle", interval=0.25)


def run_row(fleet: Fleet, run_id: str) -> tuple[str, int]:
    with database(fleet) as engine, engine.connect() as conn:
        status, attempts = conn.execute(select(Run.status, Run.attempts).where(Run.id == run_id)).one()
    return status, attempts


def model_counts(fleet: Fleet, handle: str) -> tuple[int, int]:
    """(versions, samples) of one model, read from the database."""
    with database(fleet) as engine, engine.connect() as conn:
        model_id = conn.scalar(select(Model.id).where(Model.handle == handle))
        versions = conn.scalar(select(func.count()).select_from(Version).where(Version.model_id == model_id))
        rows = conn.scalar(select(func.count()).select_from(SampleRow).where(SampleRow.model_id == model_id))
    return int(versions or 0), int(rows or 0)


def hook_line(proc: ServiceProcess, handle: str) -> str | None:
    match = re.search(rf"test hook: .* of {re.escape(handle)} sleeping", proc.log())
    return match.group(0) if match else None


def running_in(f: Fleet, handle: str) -> ServiceProcess:
    """The worker whose test hook announced it is inside a run of `handle`."""
    found = wait_until(
        lambda: next((w for w in f.workers if hook_line(w, handle)), None), 60, f"a worker to run {handle}"
    )
    return found


# ---- concurrency ------------------------------------------------------------------------------------------


def test_many_runs_each_execute_exactly_once(fleet: Running) -> None:
    f, h = fleet.fleet, fleet.headers
    # Four runs queued at once for two idle workers: each worker takes one while the other is taking one, and
    # takes another after it, so every run's message is contended for. More runs only repeat that.
    handles = [f"acme.many{i}" for i in range(4)]
    run_ids: dict[str, str] = {}
    with f.client(0, h) as a0, f.client(1, h) as a1:
        apis = (a0, a1)
        for i, handle in enumerate(handles):
            make_model(apis[i % 2], handle)
        for i, handle in enumerate(handles):  # alternate APIs: both enqueue into the one queue
            started = check(apis[i % 2].post(f"/v1/models/{handle}/train", json={"effort": "low"}), 202)
            run_ids[handle] = started["run_id"]
        for i, handle in enumerate(handles):
            model = settled(apis[(i + 1) % 2], handle)
            assert model["state"] == "ready" and model["version_no"] == 1, model["last_operation"]
    with database(f) as engine, engine.connect() as conn:
        ids = list(run_ids.values())
        rows = conn.execute(select(Run.id, Run.status, Run.attempts).where(Run.id.in_(ids))).all()
        per_run = Counter(conn.scalars(select(Version.run_id).where(Version.run_id.in_(ids))))
    assert sorted(r.id for r in rows) == sorted(run_ids.values())
    assert all(r.status == "succeeded" and r.attempts == 1 for r in rows), rows
    assert per_run == Counter(run_ids.values())  # exactly one version per run
    # Each run was started by exactly one worker, exactly once.
    started_lines = Counter(re.findall(r"run (run_[0-9a-f]+) \(train\) attempt \d+ started", f.worker_logs()))
    assert {rid: started_lines[rid] for rid in run_ids.values()} == {rid: 1 for rid in run_ids.values()}


def test_workers_consume_the_configured_queue(fleet: Running) -> None:
    expected = {"sqlite": "SqliteStorage", "postgres": "SqlStorage", "postgres+redis": "RedisStorage"}[
        fleet.backend
    ]
    queues = re.findall(r"Scoring worker ready: \d+ thread\(s\), queue (\w+)", fleet.fleet.worker_logs())
    assert queues and set(queues) == {expected}


@pytest.mark.queue_free
def test_simultaneous_identical_discovers_one_run_one_conflict(fleet: Running) -> None:
    """Queue-free: the conflict is decided in the database before anything is enqueued; the accepted run's
    one message is delivered as any other (test_many_runs_each_execute_exactly_once)."""
    f, h = fleet.fleet, fleet.headers
    with f.client(0, h) as a0, f.client(1, h) as a1:
        for n in range(3):
            handle = f"acme.twins{n}"
            make_model(a0, handle)
            barrier = threading.Barrier(2)
            responses: list[httpx.Response] = []

            def discover(
                c: httpx.Client, handle: str, barrier: threading.Barrier, responses: list[httpx.Response]
            ) -> None:
                barrier.wait(timeout=30)
                responses.append(c.post(f"/v1/models/{handle}/traits/discover", json={"effort": "low"}))

            threads = [
                threading.Thread(target=discover, args=(c, handle, barrier, responses)) for c in (a0, a1)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert sorted(r.status_code for r in responses) == [202, 409], [r.text for r in responses]
            accepted = next(r for r in responses if r.status_code == 202)
            rejected = next(r for r in responses if r.status_code == 409)
            assert rejected.json()["error"]["code"] == "duplicate_run"
            assert rejected.headers["X-Run-Id"] == accepted.json()["run_id"]
            assert settled(a1, handle)["state"] == "draft"
            with database(f) as engine, engine.connect() as conn:
                model_id = conn.scalar(select(Model.id).where(Model.handle == handle))
                kinds = conn.scalars(select(Run.kind).where(Run.model_id == model_id)).all()
            assert kinds == ["discover"]


@pytest.mark.queue_free
def test_concurrent_imports_lose_no_row(fleet: Running) -> None:
    f, h = fleet.fleet, fleet.headers
    handle = "acme.imports"
    threads_n, batches, size = 4, 5, 40
    with f.client(0, h) as c:
        make_model(c, handle, data=False)
    sent: set[tuple[str, str, float]] = set()
    plans: list[list[list[dict[str, Any]]]] = []
    for t in range(threads_n):
        plan = []
        for b in range(batches):
            batch = []
            for i in range(size):
                # Every 10th sample is shared by all threads: stored once, by design (dedupe).
                text = f"shared sample {b}-{i}" if i % 10 == 0 else f"thread {t} batch {b} sample {i}"
                trait, quality = ("formality", "sentiment")[i % 2], float(i % 2)
                batch.append({"trait": trait, "text": text, "quality": quality})
                sent.add((trait, text, quality))
            plan.append(batch)
        plans.append(plan)
    results: dict[int, list[list[int]]] = {}
    errors: list[BaseException] = []

    def importer(t: int) -> None:
        try:
            with f.client(0, h) as a0, f.client(1, h) as a1:
                out = []
                for b, batch in enumerate(plans[t]):
                    c = (a0, a1)[(t + b) % 2]
                    resp = c.post(f"/v1/models/{handle}/samples", json={"samples": batch})
                    out.append(check(resp, 201)["ids"])
                results[t] = out
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=importer, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    ids = {i for out in results.values() for batch in out for i in batch}
    assert all(len(batch) == size for out in results.values() for batch in out)
    assert len(ids) == len(sent)  # one row per distinct sample, every one acknowledged
    assert model_counts(f, handle) == (0, len(sent))
    with f.client(1, h) as c:
        assert check(c.get(f"/v1/models/{handle}"), 200)["sample_count"] == len(sent)


# ---- faults -----------------------------------------------------------------------------------------------


def test_worker_killed_mid_training_is_retried_once_elsewhere(fleet: Running) -> None:
    f, h = fleet.fleet, fleet.headers
    handle = f"{SLOW_PREFIX}-kill"
    with f.client(0, h) as c:
        make_model(c, handle)
        run_id = check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}), 202)["run_id"]
        victim = running_in(f, handle)
        survivor = next(w for w in f.workers if w is not victim)
        victim.kill9()
        # Mid-run: nothing applied, every sample in place. The run is still running, or already back in the
        # queue (the worker's run lock died with it, so the next sweep re-queues it at once), or in its retry.
        assert run_row(f, run_id) in (("running", 1), ("queued", 1), ("running", 2))
        assert model_counts(f, handle) == (0, 24)
        model = settled(c, handle, timeout=HEARTBEAT_TIMEOUT_S + SETTLE_S)
        assert model["state"] == "ready" and model["version_no"] == 1, model["last_operation"]
        assert model["last_operation"]["run_id"] == run_id
        assert run_row(f, run_id) == ("succeeded", 2)
        assert f"run {run_id} (train) attempt 2 started" in survivor.log()
        # Taken back because its worker is gone (its run lock went with it), once.
        requeued = f"re-queued run {run_id}: its worker is gone"
        assert sum(p.log().count(requeued) for p in f.procs) == 1
        assert model_counts(f, handle) == (1, 24)
        # The model trains again normally.
        again = check(c.post(f"/v1/models/{handle}/train", json={"reoptimize_params": True}), 202)
        model = settled(c, handle)
        assert model["state"] == "ready" and model["version_no"] == 2
        assert run_row(f, again["run_id"]) == ("succeeded", 1)
    assert model_counts(f, handle) == (2, 24)


def test_a_shard_whose_worker_was_killed_is_embedded_again(fleet: Running) -> None:
    """A training of 300 texts in 3 shards: the other worker takes a shard and is killed holding it; the run's
    own worker queues it again once its heartbeat is stale, embeds it, and the run succeeds in its first
    attempt, equal to a training without shards (same samples, another model). Three shards, not more: the
    run's own worker holds each shard it takes for SHARD_HOLD_S, one after the other."""
    f, h = fleet.fleet, fleet.headers
    handle = f"{SHARD_PREFIX}-kill"
    rows = [
        {
            "trait": ("formality", "sentiment")[i % 2],
            "text": f"shard sample {i}",
            "quality": float(i // 2 % 2),
        }
        for i in range(300)
    ]
    with f.client(0, h) as c:
        make_model(c, handle, data=False)
        check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows[:150]}), 201)
        check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows[150:]}), 201)
        run_id = check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}), 202)["run_id"]
        coordinator = wait_until(
            lambda: next(
                (w for w in f.workers if f"run {run_id} (train) attempt 1 started" in w.log()), None
            ),
            60,
            "a worker to start the run",
        )
        other = next(w for w in f.workers if w is not coordinator)
        wait_until(lambda: hook_line(other, handle), 60, "the other worker to take a shard")
        held = re.search(r"shard (\d+) of run", hook_line(other, handle) or "")
        assert held is not None
        other.kill9()
        model = settled(c, handle, timeout=HEARTBEAT_TIMEOUT_S + 3 * SHARD_HOLD_S + SETTLE_S)
        assert model["state"] == "ready", model["last_operation"]
        assert run_row(f, run_id) == ("succeeded", 1)
        assert f"shard {held.group(1)}'s worker stopped; queueing it again" in coordinator.log()
        snapshot = check(c.get(f"/v1/models/{handle}/versions/v1"), 200)["snapshot"]
    with database(f) as engine, engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(RunShard)) == 0
    alone = train_engine(rows)
    assert [t["key"] for t in snapshot["traits"]] == [t["key"] for t in alone["traits"]]
    for ours, engines in zip(snapshot["traits"], alone["traits"], strict=True):
        assert np.allclose(ours["w"], engines["w"], atol=1e-9)


def train_engine(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The engine's own training (one process, no shards) on the same samples in the same order."""
    traits = [
        TraitSpec(key=trait_key(t["name"]), name=t["name"], positive_label=t["positive_label"],
                  negative_label=t["negative_label"])
        for t in TRAITS
    ]  # fmt: skip
    samples = [Sample(trait_key(r["trait"]), r["text"], r["quality"], id=i + 1) for i, r in enumerate(rows)]
    return train(traits, samples, embedder=get_embedder("hashing"), effort="low").snapshot


def test_worker_sigterm_hands_its_run_back(fleet: Running) -> None:
    """Graceful stop: the run outlives the shutdown grace, so it is handed back and the other worker
    finishes it: at once, not after the lost-run sweep (a queue that delivers at once, Redis, gave it to the
    other worker while the stopping one still held the run's lock)."""
    f, h = fleet.fleet, fleet.headers
    handle = f"{SLOW_PREFIX}-term"
    with f.client(1, h) as c:
        make_model(c, handle)
        run_id = check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}), 202)["run_id"]
        stopping = running_in(f, handle)
        assert stopping.terminate() == 0
        assert f"handed run {run_id} back to the queue" in stopping.log()
        model = settled(c, handle)
        assert model["state"] == "ready" and model["version_no"] == 1
        assert run_row(f, run_id) == ("succeeded", 2)
        other = next(w for w in f.workers if w is not stopping)
        assert f"run {run_id} is held by another worker" not in other.log()
    assert model_counts(f, handle) == (1, 24)


@pytest.mark.queue_free
def test_api_killed_mid_bulk_import_stores_nothing(fleet_apis: Running) -> None:
    f, h = fleet_apis.fleet, fleet_apis.headers
    handle = f"{BULK_PREFIX}-kill"
    with f.client(0, h) as c:
        make_model(c, handle, data=False)
    batch = [
        {"trait": ("formality", "sentiment")[i % 2], "text": f"bulk sample {i}", "quality": float(i % 2)}
        for i in range(500)
    ]
    outcome: list[BaseException | httpx.Response] = []

    def post() -> None:
        try:
            with f.client(1, h) as c:
                outcome.append(c.post(f"/v1/models/{handle}/samples", json={"samples": batch}))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    poster = threading.Thread(target=post)
    poster.start()
    api = f.apis[1]
    wait_until(lambda: hook_line(api, handle), 60, "the 500-sample request to hold its commit")
    assert "samples commit (500 rows)" in (hook_line(api, handle) or "")
    api.kill9()
    poster.join(timeout=60)
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.HTTPError), outcome
    assert model_counts(f, handle) == (0, 0)  # none of the 500 (all or none)
    with f.client(0, h) as c:
        # The dead request's transaction and row lock are gone: the model takes writes at once.
        extra = {"name": "Extra", "positive_label": "yes", "negative_label": "no"}
        check(c.post(f"/v1/models/{handle}/traits", json={"traits": [extra]}), 201)
        assert check(c.get(f"/v1/models/{handle}"), 200)["sample_count"] == 0


@pytest.mark.queue_free
def test_restart_everything_keeps_state(running_fleet: Running) -> None:
    """Queue-free: the fleet is idle when it stops, so the queue holds nothing across the restart; what is
    kept is the database's. A process a fault test left stopped is not started only to be stopped (the test
    needs the first API and a worker before); after the stop, the second API and one worker start again:
    every process start costs seconds of CPU, and an API to read the state and a worker to train on it are
    all the restart needs (the module's start already proves four processes starting at once)."""
    f, h = running_fleet.fleet, running_fleet.headers
    f.ensure_running(procs=[f.apis[0], *([] if any(w.alive for w in f.workers) else f.workers[:1])])
    with f.client(0, h) as c:
        make_model(c, "acme.keep")
        check(c.post("/v1/models/acme.keep/train", json={"effort": "low"}), 202)
        settled(c, "acme.keep")
        check(c.post("/v1/models/acme.keep/versions/prod", json={}), 200)
        before = snapshot(c)
    # Run after the other tests, the snapshot covers their models too (imports, retried runs, ...).
    assert "acme.keep" in before and before["acme.keep"]["model"]["version_tags"] == ["prod"]
    running = [p for p in f.procs if p.alive]
    assert f.apis[0] in running and set(running) & set(f.workers)
    for p in running:  # graceful stop of everything at once, idle
        p.send_term()
    for p in running:
        code = p.wait_exit()
        if p in f.apis:  # a stop asked for is a clean end (service/commands/serving.py, serve)
            assert code == 0 and "service stopped" in p.log(), p.log()[-2000:]
        else:
            assert code == 0 and "worker stopped" in p.log(), p.log()[-2000:]
    assert not any(p.alive for p in f.procs)
    f.ensure_running(procs=[f.apis[1], f.workers[0]])
    with f.client(1, h) as c:
        assert snapshot(c) == before
        make_model(c, "acme.after")
        check(c.post("/v1/models/acme.after/train", json={"effort": "low"}), 202)
        assert settled(c, "acme.after")["state"] == "ready"


def snapshot(c: httpx.Client) -> dict[str, Any]:
    """Every acme model with its versions (tags included), traits and samples, as the API shows them."""
    out: dict[str, Any] = {}
    for model in pages(c, "/v1/models", {"namespace": "acme", "limit": 250}):
        handle = model["handle"]
        out[handle] = {
            "model": model,
            "versions": pages(c, f"/v1/models/{handle}/versions", {"limit": 100}),
            "traits": check(c.get(f"/v1/models/{handle}/traits"), 200),
            "samples": pages(c, f"/v1/models/{handle}/samples", {"limit": 500}),
        }
    return out


def pages(c: httpx.Client, url: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        body = check(c.get(url, params={**params, **({"cursor": cursor} if cursor else {})}), 200)
        items += body["items"]
        cursor = body.get("next_cursor")
        if not cursor:
            return items
    raise AssertionError(f"{url}: more than 1000 pages")
