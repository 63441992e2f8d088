"""The Huey queue on PostgreSQL: processes starting together on a new database must all come up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.pgcluster import PgCluster, PgClusterError, find_pg_bin
from harness.waiting import wait_until

try:
    find_pg_bin()
except PgClusterError:  # pragma: no cover - the binaries are on every machine of this project
    pytest.skip("PostgreSQL binaries are not installed", allow_module_level=True)

# Each process imports what it needs, says it is ready, waits for the go file, then builds the queue (which
# creates its tables): only the building races, however long the imports take on a busy machine.
_BUILD = """
import os, sys, time
from service.runs.queue import _sql_huey
open(sys.argv[3], "w").close()
go = sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.005)
huey = _sql_huey(sys.argv[1])
huey.enqueue  # the queue object is usable
print("queue ready")
"""
READY_TIMEOUT_S = 180  # six interpreters importing the service at once, on a machine busy with other tests


def test_processes_starting_together_all_build_the_queue(pg_cluster: PgCluster, tmp_path: Path) -> None:
    url = pg_cluster.create_database("queue_race")
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(6)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILD, url, str(go), str(flag)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for flag in ready
    ]

    def at_the_start_line() -> bool:
        dead = [p for p in procs if p.poll() is not None]
        assert not dead, dead[0].communicate()[1]
        return all(flag.exists() for flag in ready)

    wait_until(at_the_start_line, READY_TIMEOUT_S, "the processes to reach the start line")
    go.touch()
    results = [p.communicate(timeout=60) for p in procs]
    failures = [err for p, (_, err) in zip(procs, results, strict=True) if p.returncode != 0]
    assert not failures, failures[0]
    assert all("queue ready" in out for out, _ in results)
    with pg_cluster.connect("queue_race") as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE %s", ("%task%",))
        row = cur.fetchone()
        assert row is not None and row[0] >= 1


def test_the_queue_url_picks_redis_and_refuses_other_schemes(tmp_path: Path) -> None:
    from huey import RedisHuey, SqliteHuey

    from service.config.settings import Settings
    from service.runs.queue import make_huey

    assert isinstance(make_huey(Settings.from_env(data_dir=tmp_path)), SqliteHuey)
    settings = Settings.from_env(data_dir=tmp_path, queue_url="redis://127.0.0.1:1/0")
    assert isinstance(make_huey(settings), RedisHuey)  # connects lazily: nothing listens on port 1
    with pytest.raises(ValueError, match="only Redis URLs"):
        Settings.from_env(data_dir=tmp_path, queue_url="amqp://127.0.0.1/")
