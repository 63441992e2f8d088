"""The service under load: N `python -m service serve` processes over one data dir and database
(harness.fleet's launcher), on SQLite in a temp data dir or a throwaway PostgreSQL cluster
(`harness.pgcluster`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx

from harness.fleet import Fleet, fleet_env
from harness.pgcluster import PgCluster
from service.store.api_keys import create_key as store_key
from service.store.db import make_engine, make_session_factory, transaction

NAMESPACE = "bench"


class Service(Fleet):
    """N API processes sharing one data dir and database; process 0 also runs the background runs."""

    @property
    def base_urls(self) -> list[str]:
        return [self.url(i) for i in range(len(self.apis))]

    def http(self, key: str, timeout: float = 120) -> httpx.Client:
        """A client of the first API process with `key` (no proxy from the environment)."""
        return self.client(0, {"Authorization": f"Bearer {key}"}, timeout=timeout)

    def create_key(self, namespace: str = NAMESPACE, scope: str = "authoring") -> str:
        return super().create_key(namespace, scope)

    def scoring_keys(self, n: int) -> list[str]:
        """`n` scoring keys of the namespace, stored in one transaction (`keys create` is a process each)."""
        engine = make_engine(self.database_url or f"sqlite:///{self.data_dir / 'scoring.sqlite'}")
        try:
            with transaction(make_session_factory(engine)) as s:
                return [store_key(s, [NAMESPACE], "scoring") for _ in range(n)]
        finally:
            engine.dispose()

    def cpu_seconds(self) -> float:
        """User + system CPU time of the API processes so far (all their threads)."""
        return sum(p.cpu_seconds() for p in self.apis)


def built_graphs() -> dict[str, str]:
    """The caller's SCORING_EMBEDDER_DIR, for a fleet's environment (which drops the caller's settings): the
    int8 graphs built there are reused, not built again (mpnet-base's, which the blend needs, is minutes of
    CPU)."""
    where = os.environ.get("SCORING_EMBEDDER_DIR")
    return {"SCORING_EMBEDDER_DIR": where} if where else {}


@contextlib.contextmanager
def running_service(
    database: str,
    embedder: str,
    processes: int = 1,
    worker: str = "child",
    start_timeout: float = 180.0,
    limits: bool = True,
    env: dict[str, str] | None = None,
) -> Iterator[Service]:
    """The service on `database` ("sqlite" or "postgres"), stopped and removed on leaving. `worker`: where
    process 0 runs the background runs, "child" (serve's default) or "in-process". `limits`: the default rate
    limits (what users get), else every rate limit off. `env`: more variables for the processes."""
    with tempfile.TemporaryDirectory(prefix=f"load-{database}-") as tmp, contextlib.ExitStack() as stack:
        url = stack.enter_context(PgCluster(database="bench")).url if database == "postgres" else None
        off = {
            f"SCORING_{kind}_PER_S": "0"
            for kind in ("SCORE_RATE", "SCORE_CHARS", "WRITE_RATE", "IMPORT_RATE")
        }
        off["SCORING_SCORE_REQUEST_CHARS"] = "0"
        extra = {**built_graphs(), **({} if limits else off), **(env or {})}
        env = fleet_env(Path(tmp), url, embedder, TRANSFORMERS_OFFLINE="1", **extra)
        # Every process encodes on its share of the cores, so together they do not oversubscribe them; each
        # stops with the benchmark (--parent-pid).
        threads = str(max(1, (os.cpu_count() or 1) // processes))
        options = ["--parent-pid", str(os.getpid()), "--scoring-threads", threads]
        service = Service(
            Path(tmp), env, apis=processes, api_options=options, in_process_worker=worker == "in-process"
        )
        stack.callback(service.stop, 20)
        service.ensure_running(start_timeout)
        yield service
