"""The local service in a notebook's life: an interrupt of the kernel's process group (as Jupyter sends
it) stops the call, not the service; starting it twice gives the one service; a stopped service is seen and
explained."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.client import TransportError
from core.local import LOG_FILE, PID_FILE, LocalServiceError, _pid_alive, local_services, start_local_service
from harness.waiting import wait_until

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

REPO = Path(__file__).resolve().parents[2]

# A kernel stand-in: starts the service, says so, then waits between calls until the interrupt comes.
# It sets Python's SIGINT handler as a Jupyter kernel sets its own: a process started with SIGINT ignored (a
# CI job run in the background of a shell without job control) passes that on, and Python then raises no
# KeyboardInterrupt. The interrupt lands between calls: one just after httpcore's pool takes its lock can
# leave that lock held (encode/httpcore#990; docs/client.md says what a user does then).
KERNEL = """
import signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
from core.local import start_local_service
svc = start_local_service(sys.argv[1], embedder="hashing", namespace="nb", startup_timeout=120, worker=False)
with svc.client() as client:
    client.health()
try:  # the interrupt may come while "started" is being written: inside the try, as any later moment is
    print("started", flush=True)
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    print("interrupted", flush=True)
try:  # a service that got the interrupt shuts down within a moment; give it that moment to show
    svc.process.wait(timeout=5)
except subprocess.TimeoutExpired:
    pass
with svc.client() as client:
    print("health", client.health().status, "running", svc.running, flush=True)
svc.stop()
"""


def test_an_interrupt_of_the_callers_group_leaves_the_service_serving(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(  # its exit closes the pipes
        [sys.executable, "-c", KERNEL, str(tmp_path)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, as a Jupyter kernel has
    ) as kernel:
        try:
            assert kernel.stdout is not None
            first = kernel.stdout.readline().strip()
            assert first == "started", f"{first!r}; log:\n{(tmp_path / LOG_FILE).read_text()}"
            os.killpg(kernel.pid, signal.SIGINT)  # what Jupyter's "interrupt kernel" does
            try:
                out, err = kernel.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(kernel.pid, signal.SIGKILL)
                out, err = kernel.communicate()
                pytest.fail(f"the kernel never finished after the interrupt; stdout:\n{out}\nstderr:\n{err}")
        finally:
            if kernel.poll() is None:
                os.killpg(kernel.pid, signal.SIGKILL)
                kernel.wait()
    assert out.split() == ["interrupted", "health", "ok", "running", "True"], f"{out}\n{err}"


def test_a_data_directory_s_service_is_one_and_a_stopped_one_is_seen(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A service another process runs on the directory is refused; once it has gone the directory is free
    again; a second start returns the running service; one that died is seen and started again. One data
    directory for the whole life: each start of a service costs seconds of CPU."""
    script = (
        "import sys\nfrom core.local import start_local_service\n"
        "svc = start_local_service(\n"
        "    sys.argv[1], embedder='hashing', namespace='nb', startup_timeout=120, worker=False\n"
        ")\n"
        "print(svc.url, flush=True)\nsys.stdin.read()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(  # its exit closes the pipes
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as other:
        try:
            assert other.stdout is not None and other.stdin is not None
            url = other.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            with pytest.raises(LocalServiceError, match=f"already served at {url}"):
                start_local_service(tmp_path, embedder="hashing", namespace="nb", startup_timeout=120)
            other.stdin.close()  # the other process exits, its service with it (atexit)
            other.wait(timeout=60)
        finally:
            if other.poll() is None:
                other.kill()
                other.wait()
    # Once that service has gone, the directory is free again. The API alone: no run here needs a worker.
    svc = start_local_service(tmp_path, embedder="hashing", namespace="nb", startup_timeout=120, worker=False)
    # A second start while it runs returns it; another namespace is refused.
    again = start_local_service(tmp_path, embedder="hashing", namespace="nb")
    assert again is svc and again.pid == svc.pid
    with pytest.raises(LocalServiceError, match="already runs here for namespace 'nb'"):
        start_local_service(tmp_path, embedder="hashing", namespace="other")
    # A service that died under its caller is seen, its client's errors say how to start it again; a stop
    # that has to kill the service says so.
    with svc.client(retries=0) as client:
        assert svc.running and client.health().status == "ok"
        svc.process.kill()  # died under the caller (killed, crashed)
        svc.process.wait()
        assert not svc.running
        assert "exited with code" in repr(svc)
        with pytest.raises(TransportError, match=r"start it again with `svc = core.start_local_service\("):
            client.health()
    again = start_local_service(
        tmp_path, embedder="hashing", namespace="nb", startup_timeout=120, worker=False
    )
    try:
        assert again is not svc and again.running
    finally:
        with caplog.at_level(logging.WARNING, logger="core.local"):
            again.stop(timeout=0)  # no time to end cleanly: killed
    assert not again.running and "did not stop within 0 s" in caplog.text and "was killed" in caplog.text


# A kernel that starts a detached service and a training, then exits (as a kernel restart ends it).
DETACHED_KERNEL = """
import sys
from core.local import start_local_service
from tests.support.client import formality_rows
svc = start_local_service(sys.argv[1], embedder="hashing", namespace="nb", detach=True, startup_timeout=120)
client = svc.client()
handle = svc.handle("tone")
client.get_or_create_model(handle)
client.add_traits(handle, [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}])
client.import_samples(handle, formality_rows())
print(svc.pid, handle, client.train(handle, effort="low").run_id, flush=True)
"""


def test_a_detached_service_outlives_its_kernel_and_is_attached_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A service started detached (a notebook's default) keeps serving after the process that started it has
    exited, its training going on; `local_services` lists it, the next start for the data directory attaches
    to that same process, and `stop()` ends it, without a warning that it was killed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    kernel = subprocess.run(
        [sys.executable, "-c", DETACHED_KERNEL, str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    try:
        assert kernel.returncode == 0, kernel.stderr[-3000:]
        pid, handle, run_id = kernel.stdout.split()
        listed = [s for s in local_services(tmp_path) if s.data_dir == tmp_path.resolve()]
        assert [(s.pid, s.detached, s.namespace) for s in listed] == [(int(pid), True, "nb")]
        svc = start_local_service(tmp_path, embedder="hashing", namespace="nb", startup_timeout=120)
        try:
            assert svc.detached and svc.pid == int(pid) and svc.running and "detached" in repr(svc)
            with svc.client() as client:
                assert client.wait(handle, run_id, timeout=120).state == "ready"
            assert start_local_service(tmp_path, embedder="hashing", namespace="nb") is svc
        finally:
            with caplog.at_level(logging.WARNING, logger="core.local"):
                svc.stop()
        assert not svc.running and "killed" not in caplog.text
        assert not [s for s in local_services(tmp_path) if s.data_dir == tmp_path.resolve()]
    finally:  # not this process's child: the server_process fixture would not see it left running
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(int(json.loads((tmp_path / PID_FILE).read_text())["pid"]), signal.SIGTERM)
    assert not _pid_alive(int(pid))  # gone (or a zombie its new parent has yet to reap)


def test_a_service_that_exited_but_was_not_reaped_is_gone() -> None:
    # A clean exit whose parent has not reaped it yet (a zombie): signal 0 still reaches it. stop() waited for
    # it, killed it and warned "did not stop … and was killed" although its log showed a clean exit.
    child = subprocess.Popen(["true"])
    try:
        stat = Path(f"/proc/{child.pid}/stat")

        def state() -> str:
            text = stat.read_text()
            return text[text.rindex(")") + 2]

        wait_until(lambda: state() == "Z", 30, "the child to exit", interval=0.01)
        assert not _pid_alive(child.pid)
    finally:
        child.wait()
