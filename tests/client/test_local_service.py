"""The client over a real loopback socket, against `python -m service serve` from `start_local_service`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core import start_local_service
from core.client import AuthenticationError, Client, LastOperation, TransportError
from core.embedders import CachedEmbedder, get_embedder
from core.local import KEY_FILE, LocalService, free_port
from harness.faults import faults_env
from harness.processes import cmdline, nice, worker_children
from harness.waiting import wait_until
from tests.support.client import formality_rows

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("local-service")


@pytest.fixture(scope="module")
def local(data_dir: Path) -> Iterator[LocalService]:
    # One service for the module (each start is an API and a worker process, ~8 CPU-s): a run of `nb.long*`
    # sleeps a minute at its first progress report (claimed, heartbeating), so the last test can stop the
    # service in the middle of a run; every other model's runs go at full speed.
    with pytest.MonkeyPatch.context() as env:  # the service's environment, not the rest of the module's
        for name, value in faults_env({"slow_run": {"handle_prefix": "nb.long", "seconds": 60}}).items():
            env.setenv(name, value)
        svc = start_local_service(data_dir, embedder="hashing", namespace="nb", startup_timeout=120)
    with svc:
        yield svc


def test_started_healthy_with_a_saved_key(local: LocalService, data_dir: Path) -> None:
    assert local.running and local.url.startswith("http://127.0.0.1:") and local.url.endswith("/v1")
    assert (data_dir / KEY_FILE).read_text().strip() == local.api_key
    assert (data_dir / KEY_FILE).stat().st_mode & 0o077 == 0  # private to the user
    with local.client() as c:
        assert c.health().status == "ok"


def test_whole_path_over_the_socket(local: LocalService) -> None:
    handle = local.handle("tone")
    with local.client() as c:
        c.create_model(handle)
        c.add_traits(handle, [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}])
        assert c.import_samples(handle, formality_rows()).stored == 12
        for i in range(5):
            c.create_model(local.handle(f"extra-{i}"))
        assert len(list(c.list_models(namespace=local.namespace, page_size=2))) == 6  # three pages

        run = c.train(handle, effort="low")
        seen: list[LastOperation] = []
        model = c.wait(handle, run.run_id, timeout=120, poll_interval=0.05, on_operation=seen.append)
        assert model.state == "ready" and seen[-1].status == "succeeded"
        assert all(op.run_id == run.run_id for op in seen)

        score = c.score(handle, "Dear Sir, please find attached the signed contract.")
        assert set(score.as_dict()) == {"formality"}
        assert c.compare(handle, "hey lol", "Dear Sir").deltas().keys() == {"formality"}


def test_wrong_key_over_the_socket(local: LocalService) -> None:
    with (
        Client(local.url, "sk_000000000000_wrongwrongwrongwrongwrong") as c,
        pytest.raises(AuthenticationError) as err,
    ):
        c.get_model(local.handle("tone"))
    assert err.value.request_id and err.value.request_id.startswith("req_")


def test_nothing_listening_is_a_transport_error() -> None:
    port = free_port()  # released at once: nothing listens there
    with Client(f"http://127.0.0.1:{port}", "k", retries=2, backoff=0.01) as c:
        assert c.base_url.endswith("/v1")  # added when the URL names only the server
        with pytest.raises(TransportError, match="3 attempts"):
            c.health()


def test_checks_here_reuse_the_vectors_the_service_computed(local: LocalService) -> None:
    """A local service's client runs `flags()` on the vectors the service keeps on this machine, and
    `svc.scorer(snapshot)` scores its texts with them: the texts it trained on are not embedded again in the
    notebook, and the answers are those of embedding them here."""
    handle = local.handle("vectors")
    rows = formality_rows()
    with local.client() as c:
        c.get_or_create_model(handle)
        c.add_traits(handle, [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}])
        c.import_samples(handle, rows)
        model = c.wait(handle, c.train(handle, effort="low").run_id, timeout=120)
        assert c.embedding_cache == local.data_dir / "embeddings.sqlite"
        reused = c.flags(handle).to_frame()
        fresh = c.flags(handle, embedder=get_embedder("hashing")).to_frame()
        assert reused.equals(fresh)
        snapshot = c.export_snapshot(handle, model.version_no or 1)
        served = c.score_many(handle, [r["text"] for r in rows]).to_numpy()
    scorer = local.scorer(snapshot)
    assert isinstance(scorer.embedder, CachedEmbedder) and not scorer.embedder.write
    assert np.allclose(scorer.score([r["text"] for r in rows]), served, atol=1e-4)
    assert (scorer.embedder.hits, scorer.embedder.misses) == (len(rows), 0)  # none embedded here


def test_background_runs_go_to_a_niced_worker_child(local: LocalService) -> None:
    # The training in test_whole_path_over_the_socket ran there: this process is the service's only worker.
    (child,) = worker_children(local.pid)
    args = cmdline(child)
    assert args[args.index("--parent-pid") + 1] == str(local.pid)  # it exits with the service, even on kill
    # Score requests come first for a core they share with a run, but only just: a lone user's training must
    # not crawl beside their other programs.
    assert 0 < nice(child) - nice(local.pid) <= 2
    assert f"started the worker process (pid {child})" in local.log_path.read_text()


def test_stop_ends_cleanly_in_the_middle_of_a_run(local: LocalService) -> None:
    with local.client() as c:
        handle = local.handle("long")
        c.create_model(handle)
        c.add_traits(handle, [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}])
        c.add_samples(handle, formality_rows())
        run = c.train(handle, effort="low")
        seen = wait_until(lambda: "test hook: run" in local.log_path.read_text(), 60, "the run to start")
        assert seen and c.get_model(handle).last_operation.status == "running"  # type: ignore[union-attr]
    workers = worker_children(local.pid)
    local.stop()  # within its timeout: no SIGKILL
    assert not local.running
    assert local.process.returncode == 0, local.log_path.read_text()[-2000:]
    assert f"handed run {run.run_id} back to the queue at shutdown" in local.log_path.read_text()
    for pid in workers:  # the worker child stopped too, and was reaped by the service before it exited
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    local.stop()  # idempotent


def test_restart_reuses_key_data_and_port(local: LocalService, data_dir: Path) -> None:
    """Yesterday's key and address still work today: the next start over the stopped service's directory
    finds its models, its key and its port. When another program holds that port, the service takes a free
    one, says so, and keeps that one from then on."""
    import socket

    from core.local import PORT_FILE, remembered_port

    # Keys, ports and stored models are the API process's: no run goes on here, so no worker process
    # (a run the last test left queued stays so).
    local.stop()  # stopped by the test before (idempotent), should that one have failed early
    key, url = local.api_key, local.url
    with start_local_service(data_dir, embedder="hashing", namespace="nb", worker=False) as again:
        assert again.api_key == key and again.url == url and again.pid != local.pid
        assert again.port_note is None
        with again.client() as c:
            assert c.get_model(again.handle("tone")).state == "ready"
    assert not again.running

    (data_dir / KEY_FILE).write_text("sk_000000000000_revokedrevokedrevoked\n")  # a key the service rejects
    port = remembered_port(data_dir)
    assert port is not None and url.endswith(f":{port}/v1")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other_program:
        # As a server binds: the stopped service's last connections to the port may still be closing.
        other_program.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other_program.bind(("127.0.0.1", port))
        other_program.listen()
        with start_local_service(data_dir, embedder="hashing", namespace="nb", worker=False) as third:
            assert third.api_key != key and (data_dir / KEY_FILE).read_text().strip() == third.api_key
            with third.client() as c:
                assert c.get_model(third.handle("tone")).handle == "nb.tone"
            assert third.url != url and third.running
            new_port = int(third.url.rsplit(":", 1)[1].split("/")[0])
            note = third.port_note or ""
            assert f"Port {port}" in note and "taken by another program" in note, note
            assert f"port {new_port} now" in note and PORT_FILE in note, note
            assert remembered_port(data_dir) == new_port

    # A key that works, but for another namespace, is not this one's: a new one takes its place. The port
    # taken instead of the busy one is kept.
    with start_local_service(data_dir, embedder="hashing", namespace="lab", worker=False) as fourth:
        assert fourth.api_key != third.api_key and (data_dir / KEY_FILE).read_text().strip() == fourth.api_key
        assert fourth.url == third.url and fourth.port_note is None
        with fourth.client() as c:
            assert c.create_model(fourth.handle("tone")).handle == "lab.tone"


def test_a_second_data_directory_builds_no_graph(
    local: LocalService, tmp_path: Path, embedder_dir: Path
) -> None:
    """The int8 graphs are the user's, not a data directory's: a local service over a new data directory, its
    models defaulting to both embedders (so it builds ahead what is missing), finds every graph built in the
    one cache and writes nothing there."""
    from core.embedders.prebuild import missing

    assert missing() == []  # `make test` built them (tests/support/embedders.py), as `make run` does
    before = {p.name: p.stat().st_mtime_ns for p in embedder_dir.iterdir()}
    with start_local_service(tmp_path / "second", embedder="auto", namespace="nb") as second:
        assert second.embedders_dir == local.embedders_dir == embedder_dir
        with second.client() as c:
            graphs = c.health().embedders
        assert graphs and {g.state for g in graphs} == {"built"}
    assert {p.name: p.stat().st_mtime_ns for p in embedder_dir.iterdir()} == before  # no build, no log
    assert not (tmp_path / "second" / "embedders").exists()
