"""A training's embedding in shards that every worker may take (service/runs/shards.py): the result
equals the engine's own training on the same samples; other workers' shards come back through the database;
a shard whose worker died is queued again; a crashed run keeps the shards that were stored; progress counts
every shard's texts; nothing of the shards is left once the run ends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select, update

from core.embedders import get_embedder
from core.engine import train
from core.engine.types import Sample, TraitSpec
from service.runs import shards
from service.store import ledger
from service.store.db import transaction
from service.store.samples import load_samples
from service.store.schema import Run, RunShard, utcnow
from tests.support.checkpoints import on_progress
from tests.support.service import TRAITS, Svc, check, running

SHARD = 60  # texts a shard here (the service's default is 5,000)
N = 600  # samples: 10 shards


class WorkerDied(BaseException):
    """Stands in for the coordinator's process dying (nothing in the run catches a BaseException)."""


@pytest.fixture
def sharding(tmp_path: Path, database_url: str) -> Iterator[Svc]:
    """No worker threads: each test drives the coordinator and the other workers' shards itself."""
    settings = {"database_url": database_url, "run_worker": False, "shard_texts": SHARD}
    with running(tmp_path, heartbeat_timeout_s=2.0, **settings) as svc:
        yield svc


def texts(i: int) -> str:
    words = "formal regards sincerely" if i % 4 < 2 else "lol dude gonna"
    return f"Sample {i}: {words} {i * 7 % 13}"


def sample_rows() -> list[dict[str, Any]]:
    return [
        {"trait": ["formality", "sentiment"][i % 2], "text": texts(i), "quality": float((i // 2) % 2)}
        for i in range(N)
    ]


def start(svc: Svc, handle: str) -> str:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=h), 201)
    rows = sample_rows()
    for i in range(0, N, 500):
        check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows[i : i + 500]}, headers=h), 201)
    return str(check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}, headers=h), 202)["run_id"])


def engine_snapshot(svc: Svc, handle: str) -> dict[str, Any]:
    """The engine's own training on the model's samples, as the service passes them (by id)."""
    c, h = svc.client, svc.author
    traits = [TraitSpec(key=t["key"], name=t["name"], positive_label=t["positive_label"],
                        negative_label=t["negative_label"], description=t["description"])
              for t in check(c.get(f"/v1/models/{handle}/traits", headers=h), 200)["traits"]]  # fmt: skip
    stored = check(c.get(f"/v1/models/{handle}/samples", params={"limit": 500}, headers=h), 200)
    items = stored["items"]
    while stored["next_cursor"]:
        params = {"limit": 500, "cursor": stored["next_cursor"]}
        stored = check(c.get(f"/v1/models/{handle}/samples", params=params, headers=h), 200)
        items += stored["items"]
    samples = [Sample(trait=x["trait"], text=x["text"], quality=x["quality"], id=x["id"]) for x in items]
    return train(traits, samples, embedder=get_embedder("hashing"), effort="low").snapshot


def same_axes(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert [t["key"] for t in a["traits"]] == [t["key"] for t in b["traits"]]
    for x, y in zip(a["traits"], b["traits"], strict=True):
        assert np.allclose(np.asarray(x["w"]), np.asarray(y["w"]), atol=1e-9)


def shard_rows(svc: Svc, run_id: str) -> dict[int, tuple[str, int, bool]]:
    """{shard: (status, attempts, vectors stored)}"""
    with transaction(svc.ctx.reads) as s:
        rows = s.execute(
            select(
                RunShard.shard_no, RunShard.status, RunShard.attempts, RunShard.vectors.is_not(None)
            ).where(RunShard.run_id == run_id)
        ).all()
    return {no: (status, attempts, stored) for no, status, attempts, stored in rows}


def test_other_workers_shards_come_back_through_the_database_and_train_what_the_engine_trains(
    sharding: Svc,
) -> None:
    svc = sharding
    run_id = start(svc, "acme.shards")
    taken: list[int] = []

    def another_worker(run: str, no: int) -> None:
        """The message of every odd shard is taken at once by another worker (here synchronously)."""
        if no % 2:
            svc.ctx.executor.embed_shard(run, no)
            taken.append(no)

    reports: list[dict[str, Any]] = []
    svc.ctx.executor.enqueue_shard = another_worker
    with on_progress(svc.ctx.executor, lambda phase: reports.append({"phase": phase})):
        svc.ctx.executor.execute(run_id)
    assert taken == [1, 3, 5, 7, 9]
    model = check(svc.client.get("/v1/models/acme.shards", headers=svc.author), 200)
    assert model["state"] == "ready", model["last_operation"]
    version = check(svc.client.get("/v1/models/acme.shards/versions/v1", headers=svc.author), 200)
    same_axes(version["snapshot"], engine_snapshot(svc, "acme.shards"))
    assert shard_rows(svc, run_id) == {}  # the vectors are gone with the run


def test_a_shard_whose_worker_died_is_queued_again(sharding: Svc) -> None:
    svc = sharding
    run_id = start(svc, "acme.lost-shard")

    def dies_holding(run: str, no: int) -> None:
        """Shard 3's worker claims it and dies: the row says running, its heartbeat goes stale."""
        if no == 3:
            with transaction(svc.ctx.sessions) as s:
                assert shards.claim_shard(s, run, no) == 1
                s.execute(
                    update(RunShard)
                    .where(RunShard.run_id == run, RunShard.shard_no == no)
                    .values(heartbeat_at=utcnow() - timedelta(minutes=1))
                )

    svc.ctx.executor.enqueue_shard = dies_holding
    claims: list[dict[int, tuple[str, int, bool]]] = []
    with on_progress(svc.ctx.executor, lambda phase: claims.append(shard_rows(svc, run_id))):
        svc.ctx.executor.execute(run_id)
    assert claims[0][3] == ("done", 2, False)  # taken again (second claim) and embedded by the run's worker
    assert all(attempts == 1 for no, (_, attempts, _) in claims[0].items() if no != 3)
    assert check(svc.client.get("/v1/models/acme.lost-shard", headers=svc.author), 200)["state"] == "ready"


def test_a_crashed_run_keeps_the_stored_shards_and_embeds_the_rest_again(sharding: Svc) -> None:
    svc = sharding
    run_id = start(svc, "acme.crash-shards")

    def odd_elsewhere(run: str, no: int) -> None:
        if no % 2:
            svc.ctx.executor.embed_shard(run, no)

    def die(phase: str) -> None:
        raise WorkerDied(phase)  # in the engine, after the embedding: every shard is done

    svc.ctx.executor.enqueue_shard = odd_elsewhere
    with on_progress(svc.ctx.executor, die), pytest.raises(WorkerDied):
        svc.ctx.executor.execute(run_id)
    before = shard_rows(svc, run_id)
    assert before == {no: ("done", 1, bool(no % 2)) for no in range(10)}  # the run's own are in no row
    with transaction(svc.ctx.sessions) as s:  # the heartbeat of the dead worker goes stale
        s.execute(update(Run).where(Run.id == run_id).values(heartbeat_at=utcnow() - timedelta(minutes=5)))
    assert svc.ctx.recover() == [run_id]

    seen: list[dict[int, tuple[str, int, bool]]] = []
    svc.ctx.executor.enqueue_shard = lambda run, no: None
    with on_progress(svc.ctx.executor, lambda phase: seen.append(shard_rows(svc, run_id))):
        svc.ctx.executor.execute(run_id)
    after = seen[0]
    assert {no for no, (_, attempts, _) in after.items() if attempts == 2} == {0, 2, 4, 6, 8}
    assert {no for no, (_, attempts, stored) in after.items() if attempts == 1 and stored} == {1, 3, 5, 7, 9}
    model = check(svc.client.get("/v1/models/acme.crash-shards", headers=svc.author), 200)
    assert model["state"] == "ready"
    version = check(svc.client.get("/v1/models/acme.crash-shards/versions/v1", headers=svc.author), 200)
    same_axes(version["snapshot"], engine_snapshot(svc, "acme.crash-shards"))
    assert shard_rows(svc, run_id) == {}


def test_progress_counts_the_texts_of_every_shard(sharding: Svc) -> None:
    svc = sharding
    run_id = start(svc, "acme.progress")
    with transaction(svc.ctx.sessions) as s:
        run = ledger.claim(s, run_id)
        assert run is not None
        model_id = run.model_id
        samples = load_samples(s, model_id)
    reports: list[tuple[float, str]] = []
    coordinator = shards.Coordinator(
        run_id,
        "acme.progress",
        model_id,
        svc.ctx.settings,
        svc.ctx.sessions,
        svc.ctx.embedders.get("hashing"),
        lambda run, no: svc.ctx.executor.embed_shard(run, no) if no % 2 else None,
        lambda fraction, phase, message: reports.append((fraction, message)),
    )
    vectors = coordinator.embed(samples)
    # Five shards were stored by another worker before the run's own worker embedded its first one.
    assert reports[0] == (0.6, "Embedding: 360 of 600 texts, 1 worker(s)")  # the run's own holds one
    assert [f for f, _ in reports] == sorted(f for f, _ in reports) and reports[-1][0] == 1.0
    expected = get_embedder("hashing").encode([texts(7), texts(8)])
    assert np.array_equal(vectors.encode([texts(7), texts(8)]), expected)


def test_a_run_that_ended_without_its_worker_leaves_no_shards(sharding: Svc) -> None:
    svc = sharding
    run_id = start(svc, "acme.orphan")
    svc.ctx.executor.enqueue_shard = lambda run, no: (
        svc.ctx.executor.embed_shard(run, no) if no == 1 else None
    )

    def die(phase: str) -> None:
        raise WorkerDied(phase)

    with on_progress(svc.ctx.executor, die), pytest.raises(WorkerDied):
        svc.ctx.executor.execute(run_id)
    assert shard_rows(svc, run_id)[1] == ("done", 1, True)
    with transaction(svc.ctx.sessions) as s:  # failed for good (as the sweep does after the last attempt)
        s.execute(update(Run).where(Run.id == run_id).values(status="failed"))
    svc.ctx.sweep()
    assert shard_rows(svc, run_id) == {}
