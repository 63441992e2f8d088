"""A queued run shows as queued, with its place in line, on the model pages' live progress, and a run in
flight is cancelled from the *Cancel* button beside it.

A local service of its own whose worker holds one run (the `slow_run` test hook), so the next trainings wait
in the queue for as long as the test needs them there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.client import Client, LastOperation, NotFoundError
from core.local import LocalService, start_local_service
from harness.faults import faults_env
from harness.waiting import wait_until
from tests.support.app import make_draft
from tests.support.apptest import by_label, no_exception, page

BLOCKER = "local.blocker"


@pytest.fixture(scope="module")
def local_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """This module's local service, in place of the suite's (so `app_env` points the pages at it)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in faults_env({"slow_run": {"handle_prefix": BLOCKER, "seconds": 120}}).items():
            mp.setenv(name, value)
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


def _hold_the_worker(client: Client) -> None:
    """The service's one worker busy with the blocker's run (held by the test hook)."""
    try:
        state = client.get_model(BLOCKER).state
    except NotFoundError:
        make_draft(client, BLOCKER)
        state = "draft"
    if state != "busy":
        client.train(BLOCKER, "low", reoptimize_params=state == "ready")
    _wait_running(client, BLOCKER)


@pytest.mark.usefixtures("app_env")
def test_a_version_under_evaluation_is_not_sent_to_press_evaluate(local_service: LocalService) -> None:
    # First in the module: the model trains while the worker is free, then its evaluation waits behind the
    # blocker. "v1 was not evaluated yet: press Evaluate." showed under the evaluation in progress.
    with local_service.client() as client:
        handle = make_draft(client, "local.evaluated")
        client.wait(handle, client.train(handle, "low").run_id, timeout=120)
        held_out = [("Dear Sir, I remain at your disposal.", 1.0), ("lol ok see ya", 0.0)]
        client.add_evaluation_items(handle, [{"text": t, "quality": q} for t, q in held_out])
        _hold_the_worker(client)
        client.evaluate(handle, 1)
        at = page("versions", handle)
        at.run()
        no_exception(at)
        said = [str(c.value) for c in at.caption]
        assert any("An evaluation is running" in c for c in said), said
        assert not any("press **Evaluate**" in c for c in said), said


@pytest.mark.usefixtures("app_env")
def test_queued_runs_show_their_place_in_line(local_service: LocalService) -> None:
    with local_service.client() as client:
        _hold_the_worker(client)
        first, second = make_draft(client, "local.first"), make_draft(client, "local.second")
        client.train(first, "low")
        client.train(second, "low")
        ops = [client.get_model(h).last_operation for h in (first, second)]
    assert all(isinstance(op, LastOperation) and op.status == "queued" for op in ops)
    # In line behind whatever the module's earlier tests left queued behind the blocker (an evaluation):
    # one place apart, the first trained first.
    places = [op.place_in_queue for op in ops if op is not None]
    assert len(places) == 2 and places[0] is not None and places[0] >= 1 and places[1] == places[0] + 1

    said = ["next in the queue" if n == 1 else f"number {n} in the queue" for n in places]
    for handle, expected in zip((first, second), said, strict=True):
        at = page("training", handle)
        at.run()
        no_exception(at)
        captions = [str(getattr(e.proto, "text", "")) for e in at.get("progress")]
        assert any("queued" in c and expected in c for c in captions), captions


@pytest.mark.usefixtures("app_env")
def test_a_run_is_cancelled_from_its_progress_bar(local_service: LocalService) -> None:
    with local_service.client() as client:
        _hold_the_worker(client)  # so the run stays in flight (queued) until the button is pressed
        handle = make_draft(client, "local.cancel-me")
        run = client.train(handle, "low")
        at = page("training", handle)
        at.run()
        no_exception(at)
        assert at.get("progress"), "no progress bar for the run in flight"

        by_label(at.button, "Cancel").click().run()

        no_exception(at)
        model = client.get_model(handle)
        op = model.last_operation
        assert (
            model.state == "draft" and op is not None and (op.run_id, op.status) == (run.run_id, "cancelled")
        )
        assert not at.get("progress")  # the page shows the draft again, not the run
        assert not [b for b in at.button if b.label == "Cancel"]


@pytest.mark.usefixtures("app_env")
def test_the_demo_page_says_a_queued_first_training_is_on_its_way(local_service: LocalService) -> None:
    # A demo model queued behind the user's own training on a first start: "no trained version yet: train it"
    # sent the visitor to train a model that was training.
    with local_service.client() as client:
        _hold_the_worker(client)
        handle = make_draft(client, "local.demo-queued")
        client.train(handle, "low")
        at = page("demo", handle)
        at.run()
        no_exception(at)
        said = [str(e.value) for e in (*at.info, *at.warning)]
        assert any("training its first version" in s for s in said), said
        assert not any("no trained version yet" in s for s in said), said
        assert at.get("progress"), "no progress of the queued training"


def test_the_client_tolerates_a_service_without_queue_positions() -> None:
    op = LastOperation.model_validate({"kind": "train", "status": "queued", "run_id": "run_1"})
    assert op.place_in_queue is None
    assert LastOperation.model_validate({"status": "queued", "queue_position": 3}).place_in_queue == 3
    assert LastOperation.model_validate({"status": "queued", "queue_position": "3"}).place_in_queue is None
