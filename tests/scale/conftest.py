"""A fleet of real processes per database: two API processes (`serve --no-worker`) and two workers, on a
fresh SQLite file or a fresh database on a throwaway PostgreSQL cluster (one cluster per session), and once
more on PostgreSQL with the queue on a throwaway Redis server ("postgres+redis")."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.pgcluster import PgCluster
from harness.redisserver import RedisServer
from tests.support.deselect import deselect_marked
from tests.support.fleet import FLEETS, QUEUE_FREE, Running, make_key, scale_fleet


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A `queue_free` test on the postgres+redis fleet would run the postgres fleet's code again: the same
    database, the same API, and a queue that only delivers a message as every queue does."""
    deselect_marked(config, items, QUEUE_FREE, "running_fleet", "postgres+redis")


@pytest.fixture(
    scope="module",
    params=[pytest.param(b, marks=[pytest.mark.postgres] if "postgres" in b else [], id=b) for b in FLEETS],
)
def running_fleet(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Running]:
    data_dir = tmp_path_factory.mktemp(f"fleet-{request.param}")
    database = None
    redis_server = RedisServer().start() if request.param.endswith("+redis") else None
    if request.param.startswith("postgres"):
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        database = f"fleet_{uuid.uuid4().hex[:12]}"
        url = cluster.create_database(database)
    else:
        url = f"sqlite:///{Path(data_dir) / 'scoring.sqlite'}"
    fleet = scale_fleet(url, Path(data_dir), queue_url=redis_server.url if redis_server else None)
    try:
        # All four start at once on an empty database: the migrations must not collide.
        fleet.ensure_running()
        yield Running(fleet, make_key(url), request.param)
    finally:
        fleet.stop(timeout=10)
        if redis_server is not None:
            redis_server.stop()
        if database is not None:
            request.getfixturevalue("pg_cluster").drop_database(database)


@pytest.fixture
def fleet(running_fleet: Running) -> Running:
    """The module's fleet with every process up (a fault test may have killed one)."""
    running_fleet.fleet.ensure_running()
    return running_fleet


@pytest.fixture
def fleet_apis(running_fleet: Running) -> Running:
    """The module's fleet with both API processes up: for a test that runs nothing, a worker a fault test
    stopped stays stopped (every process start costs seconds of CPU) until a test needs it."""
    running_fleet.fleet.ensure_running(procs=running_fleet.fleet.apis)
    return running_fleet
