"""`make run` starts the local service with Streamlit, not on the first visit (the first visit
waited for the whole start), and the workbench takes over that service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.shell.prestart import prestart, take
from core.local import KEY_FILE
from harness.ports import free_port
from harness.waiting import wait_until
from tests.support.app import ROOT, app_client
from tests.support.apptest import main_app, no_exception

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


def test_the_workbench_takes_the_prestarted_service_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workbench's first run takes the service prestarted with its settings; it is taken once (a second
    workbench would start its own), and only for the data directory it was started for."""
    for name in ("SCORING_API_URL", "SCORING_API_KEY", "SCORING_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCORING_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")
    monkeypatch.setenv("SCORING_DEMO", "0")
    future = prestart(str(tmp_path), "hashing")
    assert take(str(tmp_path / "other"), "hashing") is None  # another data directory's is not this one
    at = main_app()
    at.run()
    try:
        no_exception(at)
        service = future.result()
        assert service.running and any(service.url in str(c.value) for c in at.sidebar.caption)
        assert take(str(tmp_path), "hashing") is None  # taken by the workbench: once
        with service.client() as client:
            assert list(client.list_models(namespace=service.namespace)) == []
    finally:
        future.result().stop()


def test_make_runs_launch_starts_the_service_before_any_visit(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SCORING_API_URL", "SCORING_API_KEY")}
    env |= {"SCORING_DATA_DIR": str(tmp_path), "SCORING_EMBEDDER": "hashing", "SCORING_DEMO": "0"}
    cmd = [sys.executable, "-m", "app.launch", "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--server.fileWatcherType", "none",
           "--logger.level", "warning"]  # fmt: skip
    with open(tmp_path / "launch.log", "wb") as log:
        launched = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:

            def answering(url: str) -> bool:
                try:
                    return httpx.get(url, timeout=2).status_code == 200
                except httpx.TransportError:
                    return False

            def serving() -> bool:  # the service's log gives its address once it serves, after the key
                log = tmp_path / "service.log"
                return (tmp_path / KEY_FILE).exists() and log.exists() and "ready on http" in log.read_text()

            def ready() -> bool:  # the service serves and the workbench answers: nobody has visited
                assert launched.poll() is None, (tmp_path / "launch.log").read_text()
                return serving() and answering(f"http://127.0.0.1:{port}/_stcore/health")

            wait_until(ready, 120, "the workbench and its keyed local service", interval=0.2)
            with app_client(tmp_path) as client:
                assert client.health().status == "ok"
        finally:
            launched.terminate()
            launched.wait(timeout=30)
    # The terminal stays clean: the cached reads were declared before Streamlit's runtime
    # existed, and each printed "No runtime found, using MemoryCacheStorageManager".
    assert "WARNING" not in (tmp_path / "launch.log").read_text()
