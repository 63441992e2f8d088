"""A stop answers every request in flight in the API's envelope, served by uvicorn on loopback: score
requests waiting for a turn at once, anything still running when the grace ends. No clock: the test holds
the scoring slots itself and moves the stop's steps (what `serve` does on SIGTERM) by hand."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.support.service import Svc, check, loopback, make_model, running, train_ready

HANDLE = "acme.stop"


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Svc]:
    with running(tmp_path_factory.mktemp("stop")) as svc:
        make_model(svc.client, svc.author, HANDLE)
        train_ready(svc.client, svc.author, HANDLE)
        yield svc


def _until(check_: Callable[[], bool]) -> None:
    done = threading.Event()
    while not check_():
        done.wait(0.001)


def _send(base: str, key: dict[str, str], texts: list[str], out: list[httpx.Response]) -> threading.Thread:
    def post() -> None:
        with httpx.Client(base_url=base, headers=key, timeout=120, trust_env=False) as c:
            out.append(c.post(f"/v1/models/{HANDLE}/score", json={"content": texts}))

    thread = threading.Thread(target=post)
    thread.start()
    return thread


def _shutting_down(resp: httpx.Response) -> None:
    assert resp.status_code == 503, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    error = resp.json()["error"]
    assert error["code"] == "shutting_down" and error["retryable"] is True
    assert resp.headers["Retry-After"] == "1" and resp.headers["X-Request-Id"]


def test_a_stop_answers_score_requests_waiting_for_a_turn_with_503(svc: Svc) -> None:
    """Every scoring slot busy, two callers' requests waiting for a turn: the stop (SIGTERM) answers both
    503 `shutting_down` in the envelope at once, without waiting for the slots."""
    share = svc.app.state.share
    answers: list[httpx.Response] = []
    with loopback(svc) as base:
        slots = [share.turn("holder", 1) for _ in range(share.slots)]
        for slot in slots:
            slot.__enter__()
        try:
            threads = [
                _send(base, svc.key(["acme"], "scoring"), ["a text waiting", "and another"], answers)
                for _ in range(2)
            ]
            _until(lambda: share.state()[1] == 2)
            svc.app.state.stopping.set()
            share.stop()
            for t in threads:
                t.join(120)
        finally:
            for slot in slots:
                slot.__exit__(None, None, None)
            svc.app.state.stopping.clear()
            share._stopped = False  # noqa: SLF001 - the module's service goes on for the next test
    assert len(answers) == 2
    for resp in answers:
        _shutting_down(resp)


def test_a_request_still_running_when_the_grace_ends_is_answered_503(
    svc: Svc, caplog: pytest.LogCaptureFixture
) -> None:
    """A request that has not answered when the grace ends (here: waiting for slots the test holds) gets
    503 `shutting_down` in the envelope, not uvicorn's bare 500; the service answers again after."""
    share, shutdown = svc.app.state.share, svc.app.state.shutdown
    answers: list[httpx.Response] = []
    key = svc.key(["acme"], "scoring")
    caplog.set_level(logging.INFO, logger="service")
    with loopback(svc) as base:
        slots = [share.turn("holder", 1) for _ in range(share.slots)]
        for slot in slots:
            slot.__enter__()
        try:
            thread = _send(base, key, ["a text nobody will score"], answers)
            _until(lambda: share.state()[1] == 1)
            shutdown.now()  # what `Shutdown.begin`'s timer calls at the grace's end
            thread.join(120)
        finally:
            for slot in slots:
                slot.__exit__(None, None, None)
        assert len(answers) == 1
        _shutting_down(answers[0])
        said = f"answered POST /v1/models/{HANDLE}/score 503 shutting_down: the shutdown grace is over"
        assert [r.getMessage() for r in caplog.records].count(said) == 1  # answered at the deadline, once
        shutdown.over = False  # the module's service goes on
        with httpx.Client(base_url=base, headers=key, timeout=120, trust_env=False) as c:
            check(c.post(f"/v1/models/{HANDLE}/score", json={"content": "still here"}), 200)
