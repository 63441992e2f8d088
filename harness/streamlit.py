"""The workbench (`streamlit run app/main.py`) on a free loopback port, for browser tests and benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import httpx

from core.local import LocalService, start_local_service
from harness.ports import free_port
from harness.processes import stop
from harness.waiting import holds, wait_until

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def streamlit_app(data_dir: Path, **env: str) -> Iterator[str]:
    """The workbench over `data_dir` (its own local service with the hashing embedder, unless `env` names a
    remote `SCORING_API_URL` or another `SCORING_EMBEDDER`): its URL once Streamlit's health check answers.
    Its output goes to `data_dir/streamlit.log`, which a failed start shows."""
    with streamlit_script(ROOT / "app" / "main.py", data_dir, env) as url:
        yield url


@contextmanager
def prepared_workbench[T](
    data_dir: Path,
    prepare: Callable[[LocalService], T],
    *,
    env: Mapping[str, str] | None = None,
    worker: bool = True,
) -> Iterator[tuple[str, T]]:
    """The workbench over `data_dir` (`streamlit_app`, no demo models) once `prepare` has made its models
    through the data directory's service: its URL and what `prepare` returned. One service for both: started
    here detached, so the workbench's embedded service attaches to it (`core.local`) instead of starting the
    API and its worker a second time (seconds of CPU each, on CI's budget); stopped once the workbench has.
    `env` is the workbench's environment and the service's too (a fault hook, a HOME), as when the workbench
    starts its own. `worker=False`: no worker, for a test where nothing queues a run."""
    env = {"SCORING_DEMO": "0", **(env or {})}
    with mock.patch.dict(os.environ, env):  # the service's environment: its process copies this one's
        embedder = env.get("SCORING_EMBEDDER", "hashing")
        service = start_local_service(data_dir, embedder=embedder, worker=worker, detach=True)
    try:
        prepared = prepare(service)
        with streamlit_app(data_dir, **env) as url:
            yield url, prepared
    finally:
        service.stop()


@contextmanager
def streamlit_script(script: Path, data_dir: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`streamlit run SCRIPT` as `streamlit_app` runs the workbench (the test helpers' own tests run an app
    of their own)."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if k not in ("SCORING_API_URL", "SCORING_API_KEY")}
    environ |= {"SCORING_EMBEDDER": "hashing", "SCORING_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    environ |= env or {}
    log_path = data_dir / "streamlit.log"
    log = log_path.open("wb")
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port",
           str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]  # fmt: skip
    server = subprocess.Popen(cmd, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            healthy = holds(
                lambda: httpx.get(f"{url}/_stcore/health", timeout=1).text == "ok", httpx.HTTPError
            )
            wait_until(healthy, 60, "the workbench", interval=0.3)
        except TimeoutError as exc:
            raise RuntimeError(log_path.read_text()) from exc
        yield url
    finally:
        stop(server)
        log.close()
