"""A local service whose parent is SIGKILLed (no atexit) shuts itself down (`serve --parent-pid`), and its
worker child with it; a worker child whose service is SIGKILLed stops too (`worker --parent-pid`)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from core.local import LOG_FILE
from harness.processes import alive, worker_children
from harness.waiting import wait_until

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

REPO = Path(__file__).resolve().parents[2]
PARENT = """
import sys, time
from core.local import start_local_service
svc = start_local_service(sys.argv[1], embedder="hashing", namespace="nb", startup_timeout=120)
print(svc.url, svc.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    """Exited (a zombie waiting for whoever adopted it counts as exited)."""
    return not alive(pid)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_service_exits_when_its_parent_is_killed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    service_pid = worker = None
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline().split()
        assert len(line) == 2, f"parent printed {line!r}; log:\n{(tmp_path / LOG_FILE).read_text()}"
        url, service_pid = line[0], int(line[1])
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert not _gone(service_pid) and _port_open(port)
        wait_until(lambda: len(worker_children(service_pid)) == 1, 30, "a worker child", interval=0.2)
        (worker,) = worker_children(service_pid)
        wait_until(
            lambda: "Scoring worker ready" in (tmp_path / LOG_FILE).read_text(), 120, "the worker", 0.2
        )

        parent.send_signal(signal.SIGKILL)  # no atexit: only --parent-pid can stop the service now
        wait_until(lambda: _gone(service_pid), 30, "the service to exit with its killed parent", interval=0.2)
        assert _gone(worker), "the worker child outlived the service"
        assert not _port_open(port)
        log = (tmp_path / LOG_FILE).read_text()
        assert f"parent process {parent.pid} is gone" in log
        assert "service stopped" in log  # the lifespan shutdown ran: the same path as SIGTERM
        assert "worker process stopped (exit 0)" in log  # and stopped its worker child gracefully
    finally:
        _kill(parent.pid, service_pid, worker)
        parent.communicate()  # waits, and closes the pipe (left open, it warns when collected)


def test_worker_child_exits_when_the_service_is_killed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    service_pid = worker = None
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline().split()
        assert len(line) == 2, f"parent printed {line!r}; log:\n{(tmp_path / LOG_FILE).read_text()}"
        service_pid = int(line[1])
        wait_until(lambda: len(worker_children(service_pid)) == 1, 30, "a worker child", interval=0.2)
        (worker,) = worker_children(service_pid)
        wait_until(
            lambda: "Scoring worker ready" in (tmp_path / LOG_FILE).read_text(), 120, "the worker", 0.2
        )

        os.kill(service_pid, signal.SIGKILL)  # the service cannot stop its child: only --parent-pid can
        wait_until(
            lambda: _gone(worker), 30, "the worker child to exit with its killed service", interval=0.2
        )
        assert f"parent process {service_pid} is gone; stopping" in (tmp_path / LOG_FILE).read_text()
    finally:
        _kill(parent.pid, service_pid, worker)
        parent.communicate()  # waits, and closes the pipe (left open, it warns when collected)


def _kill(*pids: int | None) -> None:
    for pid in pids:
        if pid is not None and not _gone(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
