"""The fleet tests/scale runs (harness.fleet): two API processes (`serve --no-worker`) and two worker
processes on one database and queue, with short run timings and test hooks so faults resolve in seconds, on
each backend (`FLEETS`): SQLite, PostgreSQL, and PostgreSQL with the queue on Redis ("postgres+redis")."""

from __future__ import annotations

from pathlib import Path

from harness.faults import faults_env
from harness.fleet import Fleet, fleet_env
from harness.pgcluster import selected_backends
from service.store.api_keys import create_key
from service.store.db import make_engine, make_session_factory, transaction
from tests.support.service import auth, default_backends

BACKENDS = selected_backends(default=default_backends())
FLEETS = (*BACKENDS, "postgres+redis") if "postgres" in BACKENDS else BACKENDS
# A test's marker: what it proves is decided in the database, not by the queue (it enqueues nothing, or only
# runs that any working queue delivers once, with nothing held in the queue across a fault or a restart).
QUEUE_FREE = "queue_free"

# Short run timings so faults resolve in seconds (the defaults are 10 s / 60 s / 30 s).
HEARTBEAT_INTERVAL_S = 0.25
HEARTBEAT_TIMEOUT_S = 4.0
# Every process of the fleet sweeps this often, idle or not (the fleet's largest idle cost: 0.5 s cost twice
# the CPU); a dead worker's run is still re-queued within a second.
RECOVERY_INTERVAL_S = 1.0
SHUTDOWN_GRACE_S = 0.5
SLOW_RUN_S = 1.5  # models "acme.slow*" sleep this long inside their run (claimed, heartbeating)
SLOW_PREFIX = "acme.slow"
BULK_PREFIX = "acme.bulk"  # POST /samples on "acme.bulk*" holds its transaction open this long
BULK_HOLD_S = 60.0
SHARD_PREFIX = "acme.shards"  # a worker that claims a shard of these models' first training sleeps first
SHARD_HOLD_S = 3.0
SHARD_TEXTS = 100  # texts per shard of a training's embedding (models of 200 texts and more are sharded)
TEST_HOOKS = {
    "slow_run": {"handle_prefix": SLOW_PREFIX, "seconds": SLOW_RUN_S},
    "slow_samples_commit": {"handle_prefix": BULK_PREFIX, "seconds": BULK_HOLD_S},
    "slow_shard": {"handle_prefix": SHARD_PREFIX, "seconds": SHARD_HOLD_S, "attempt": 1},
}


def scale_fleet(
    database_url: str, data_dir: Path, apis: int = 2, workers: int = 2, queue_url: str | None = None
) -> Fleet:
    env = fleet_env(
        data_dir,
        database_url,
        SCORING_HEARTBEAT_INTERVAL_S=str(HEARTBEAT_INTERVAL_S),
        SCORING_HEARTBEAT_TIMEOUT_S=str(HEARTBEAT_TIMEOUT_S),
        SCORING_RECOVERY_INTERVAL_S=str(RECOVERY_INTERVAL_S),
        SCORING_SHUTDOWN_GRACE_S=str(SHUTDOWN_GRACE_S),
        **faults_env(TEST_HOOKS),
        SCORING_SHARD_TEXTS=str(SHARD_TEXTS),
        **({"SCORING_QUEUE_URL": queue_url} if queue_url else {}),
    )
    return Fleet(data_dir, env, apis=apis, workers=workers, api_options=["--log-level", "warning"])


class Running:
    """The fleet plus an authoring key for namespace acme."""

    def __init__(self, fleet: Fleet, headers: dict[str, str], backend: str) -> None:
        self.fleet = fleet
        self.headers = headers
        self.backend = backend  # "sqlite", "postgres" or "postgres+redis"


def make_key(database_url: str) -> dict[str, str]:
    engine = make_engine(database_url)
    try:
        with transaction(make_session_factory(engine)) as s:
            return auth(create_key(s, ["acme"], "authoring"))
    finally:
        engine.dispose()
