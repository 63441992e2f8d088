"""The workbench (`streamlit run app/main.py`) on a free loopback port, for browser tests and benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

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
