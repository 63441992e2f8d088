"""A queued run shows as queued, with its place in line, on the model pages' live progress.

A local service of its own whose worker holds one run (the `slow_run` test hook), so the next trainings wait
in the queue for as long as the test needs them there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.client import Client, LastOperation
from core.local import LocalService, start_local_service
from harness.waiting import wait_until
from tests.app.apptest_util import no_exception, page
from tests.app.support import make_draft

BLOCKER = "local.blocker"


@pytest.fixture(scope="module")
def held_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCORING_TEST_HOOKS", f'{{"slow_run": {{"handle_prefix": "{BLOCKER}", "seconds": 120}}}}')
        mp.setenv("SCORING_SHUTDOWN_GRACE_S", "1")  # do not wait for the held run at the end
        svc = start_local_service(tmp_path_factory.mktemp("queue-service"), embedder="hashing")
    try:
        yield svc
    finally:
        svc.stop()


def _wait_running(client: Client, handle: str, timeout: float = 60.0) -> None:
    def running() -> bool:
        op = client.get_model(handle).last_operation
        return op is not None and op.status == "running"

    wait_until(running, timeout, f"{handle}'s run to start", interval=0.1)


def test_queued_runs_show_their_place_in_line(
    held_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pages find this service as they find any other (tests/app/conftest.py's app_env).
    monkeypatch.setenv("SCORING_API_URL", held_service.url)
    monkeypatch.setenv("SCORING_API_KEY", held_service.api_key)
    monkeypatch.setenv("SCORING_NAMESPACE", held_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")
    with held_service.client() as client:
        make_draft(client, BLOCKER)
        client.train(BLOCKER, "low")
        _wait_running(client, BLOCKER)  # the one worker is now held
        first, second = make_draft(client, "local.first"), make_draft(client, "local.second")
        client.train(first, "low")
        client.train(second, "low")
        ops = [client.get_model(h).last_operation for h in (first, second)]
    assert all(isinstance(op, LastOperation) and op.status == "queued" for op in ops)
    assert [op.place_in_queue for op in ops if op is not None] == [1, 2]

    for handle, expected in ((first, "next in the queue"), (second, "number 2 in the queue")):
        at = page("training", handle)
        at.run()
        no_exception(at)
        captions = [str(getattr(e.proto, "text", "")) for e in at.get("progress")]
        assert any("queued" in c and expected in c for c in captions), captions


def test_the_client_tolerates_a_service_without_queue_positions() -> None:
    op = LastOperation.model_validate({"kind": "train", "status": "queued", "run_id": "run_1"})
    assert op.place_in_queue is None
    assert LastOperation.model_validate({"status": "queued", "queue_position": 3}).place_in_queue == 3
    assert LastOperation.model_validate({"status": "queued", "queue_position": "3"}).place_in_queue is None
