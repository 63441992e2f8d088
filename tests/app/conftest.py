"""One real local service (hashing embedder, temporary data dir) for every workbench test.

The pages find it through SCORING_API_URL / SCORING_API_KEY / SCORING_NAMESPACE, exactly as a user
pointing the workbench at a remote service would.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from core.client import Client
from core.local import LocalService, start_local_service
from harness.streamlit import streamlit_app
from tests.support import failures
from tests.support.app import CALL_FAILED, FORMALITY, SENTIMENT, make_draft, new_handle


def pytest_runtest_setup(item: pytest.Item) -> None:
    failures.begin(item.name)  # the pages its `Ui`s drive are captured if it fails


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing browser test's pages are captured here, once for every test (tests/support/failures.py):
    those still open when the failure is reported; those the test closed were captured as it closed them."""
    report: pytest.TestReport = yield
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed
    if report.failed and report.when != "teardown":
        failures.capture_open()
    if report.when == "teardown":
        failures.end()
    return report


@pytest.fixture(scope="session")
def local_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """The workbench's local service, a process of its own, once per test worker; a test that uses it is in
    the `pages` tier (tests/support/markers.py)."""
    svc = start_local_service(tmp_path_factory.mktemp("workbench-service"), embedder="hashing")
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def app_env(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the pages at the test service for one test (restored after it, so no other suite sees it)."""
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", local_service.api_key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


@pytest.fixture(scope="session")
def client(local_service: LocalService) -> Iterator[Client]:
    with local_service.client() as c:
        yield c


@pytest.fixture
def draft(local_service: LocalService, client: Client) -> str:
    return make_draft(client, new_handle(local_service, "draft"))


@pytest.fixture(scope="session")
def trained(local_service: LocalService, client: Client) -> str:
    """A ready model with two versions (a first training and a retune), v1 tagged `first`."""
    handle = make_draft(client, new_handle(local_service, "trained"), (FORMALITY, SENTIMENT))
    ref = client.train(handle, "low")
    client.wait(handle, ref.run_id, timeout=120)
    client.tag_version(handle, "first")
    ref = client.train(handle, "low", reoptimize_params=True)
    client.wait(handle, ref.run_id, timeout=120)
    return handle


# -- browser tests: one Chromium and one `streamlit run` per module that asks for them ------------------


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir of the module's workbench: its embedded service's data, port and key are there."""
    return tmp_path_factory.mktemp("browser-service")


@pytest.fixture(scope="module")
def app_url(app_dir: Path) -> Iterator[str]:
    with streamlit_app(app_dir) as url:
        yield url
