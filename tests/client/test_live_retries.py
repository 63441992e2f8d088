"""Retries: a fault injector around the real server fails a set number of attempts."""

from __future__ import annotations

from typing import Any

import pytest

from core.client import Client, NotFoundError, RateLimitError, ServerError, TransportError
from core.client.retry import MAX_RETRY_AFTER
from tests.support.client import NAMESPACE, FaultInjector, Service, make_draft


def _client(service: Service, faults: FaultInjector, delays: list[float], **kwargs: Any) -> Client:
    c = service.client(transport=faults, backoff=0.5, **kwargs)
    c._sleep = delays.append  # record the waits instead of sleeping
    return c


def test_connection_refused_is_retried_even_for_create(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    handle = service.handle("refused")
    faults.inject("connect", method="POST", path="/models", times=2)
    with _client(service, faults, delays) as c:
        model = c.create_model(handle)
    attempts = faults.attempts("POST", "/models")
    assert model.handle == handle and len(attempts) == 3
    assert len({a.headers["X-Request-Id"] for a in attempts}) == 1  # one logical call
    assert len([r for r in faults.forwarded if r.method == "POST"]) == 1  # created exactly once
    assert 0.25 <= delays[0] <= 0.5 and 0.5 <= delays[1] <= 1.0  # exponential, jittered


def test_connection_errors_exhaust_into_transport_error(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    faults.inject("connect", times=10)
    with _client(service, faults, delays, retries=2) as c, pytest.raises(TransportError) as err:
        c.get_model(f"{NAMESPACE}.x")
    assert len(faults.seen) == 3 and not faults.forwarded and len(delays) == 2
    assert err.value.request_id == faults.seen[0].headers["X-Request-Id"]
    assert isinstance(err.value.__cause__, Exception) and "3 attempts" in str(err.value)


def test_5xx_after_server_acted_not_retried_for_create(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    handle = service.handle("half-created")
    faults.inject("status-after", status=503, method="POST", path="/models")
    with _client(service, faults, delays) as c:
        with pytest.raises(ServerError) as err:
            c.create_model(handle)
        assert err.value.status == 503 and len(faults.attempts("POST", "/models")) == 1 and not delays
        assert c.get_model(handle).handle == handle  # it was created: a retry would have hit handle_taken


def test_lost_response_is_not_retried_for_add_samples(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    with _client(service, faults, delays) as c:
        handle = make_draft(c, service.handle("lost"), samples=False)
        faults.inject("read-timeout", method="POST", path="/samples")
        with pytest.raises(TransportError):
            c.add_samples(handle, [{"trait": "formality", "text": "Dear Sir", "quality": 1.0}])
        assert len(faults.attempts("POST", "/samples")) == 1


def test_5xx_and_lost_responses_are_retried_for_reads(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    with _client(service, faults, delays) as c:
        handle = service.handle("reads")
        c.create_model(handle)
        faults.inject("status-after", status=500, method="GET", times=1)
        faults.inject("read-timeout", method="GET", times=1)
        faults.inject("status-before", status=502, method="GET", times=1)
        assert c.get_model(handle).handle == handle
    assert len(faults.attempts("GET", handle)) == 4 and len(delays) == 3


def test_train_is_retried_and_joins_its_own_run(idle_service: Service) -> None:
    from tests.support.client import FaultInjector as Injector

    faults = Injector(idle_service.app_transport)
    with idle_service.client(transport=faults, backoff=0.0) as c:
        handle = make_draft(c, idle_service.handle("retrain"))
        faults.inject("status-after", status=503, method="POST", path="/train")
        run = c.train(handle)  # first attempt queued a run; the retry finds it in flight
        assert run.status_code == 202 and run.run_id
        assert len(faults.attempts("POST", "/train")) == 2
        op = c.get_model(handle).last_operation
        assert op is not None and op.run_id == run.run_id


def test_429_honours_retry_after_for_any_call(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    handle = service.handle("throttled")
    faults.inject("status-before", status=429, retry_after="3", method="POST", path="/models")
    with _client(service, faults, delays) as c:
        assert c.create_model(handle).handle == handle
    assert delays == [3.0] and len(faults.attempts("POST", "/models")) == 2


def test_429_with_a_long_retry_after_is_raised(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    faults.inject("status-before", status=429, retry_after=str(int(MAX_RETRY_AFTER) + 1), times=5)
    with _client(service, faults, delays) as c, pytest.raises(RateLimitError) as err:
        c.get_model(f"{NAMESPACE}.x")
    assert err.value.status == 429 and not delays and len(faults.seen) == 1


def test_retries_run_out_into_the_last_error(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    faults.inject("status-after", status=503, method="GET", times=10)
    with _client(service, faults, delays, retries=1) as c, pytest.raises(ServerError):
        c.health()
    assert len(faults.seen) == 2 and len(delays) == 1


def test_business_errors_are_never_retried(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    with _client(service, faults, delays) as c, pytest.raises(NotFoundError):
        c.get_model(f"{NAMESPACE}.missing")
    assert len(faults.seen) == 1 and not delays


def test_score_with_feedback_is_not_repeated(service: Service, faults: FaultInjector) -> None:
    delays: list[float] = []
    with _client(service, faults, delays) as c:
        handle = make_draft(c, service.handle("fbretry"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        faults.inject("status-after", status=503, method="POST", path="/score", times=1)
        with pytest.raises(ServerError):
            c.score(handle, "Dear Sir", feedback=[{"trait": "formality", "quality": 1.0}])
        assert c.get_model(handle).buffered_feedback == 1  # counted once, by the one attempt
        faults.inject("status-after", status=503, method="POST", path="/score", times=1)
        assert c.score(handle, "Dear Sir").as_dict()  # plain scoring is pure: retried
