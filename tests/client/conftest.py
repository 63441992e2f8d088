"""Fixtures: the real service, in-process, for the client tests (tests/support/client.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from core.client import Client
from tests.support.client import FaultInjector, Service, _start


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service with its in-process worker (runs complete)."""
    yield from _start(tmp_path_factory.mktemp("service"), run_worker=True)


@pytest.fixture(scope="session")
def idle_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service without a worker: runs stay queued, so `busy` lasts as long as a test needs."""
    yield from _start(tmp_path_factory.mktemp("idle"), run_worker=False)


@pytest.fixture
def client(service: Service) -> Iterator[Client]:
    with service.client() as c:
        yield c


@pytest.fixture
def faults(service: Service) -> FaultInjector:
    return FaultInjector(service.app_transport)


@pytest.fixture
def recording_sleep() -> tuple[list[float], Callable[[float], None]]:
    delays: list[float] = []
    return delays, delays.append
