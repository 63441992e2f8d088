"""A team workbench whose people sign in through a real OpenID Connect provider on loopback
(tests/support/idp.py): the provider with its users, a service that takes its ID tokens, the workbench in
team mode, and the steps a person takes in the browser to sign in and out. Shared by the browser tests of
signed-in teams."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page

from app.shell.signin_config import write_auth_secrets
from core.local import LocalService, start_local_service
from harness.browser import IDLE
from harness.processes import stop
from harness.streamlit import streamlit_app
from tests.support.app import Ui
from tests.support.idp import CLIENT_ID, CLIENT_SECRET, Idp, running_idp


def email(sub: str) -> str:
    """The address the provider gives `sub`: the name the service knows the person by."""
    return f"{sub}@example.com"


@contextmanager
def provider_with(people: dict[str, str]) -> Iterator[Idp]:
    """The provider, knowing each `sub` of `people` by its display name, with a verified email."""
    with running_idp() as provider:
        for sub, name in people.items():
            provider.set_user(sub, email=email(sub), email_verified=True, name=name)
        yield provider


@contextmanager
def oidc_service(idp: Idp, data_dir: Path, worker: bool = True) -> Iterator[LocalService]:
    """A local service that takes the provider's ID tokens (its settings come from the environment);
    `worker=False`: its runs wait for a `run_worker` (a run held in flight as long as a test needs)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SCORING_OIDC_ISSUER", idp.issuer)
        env.setenv("SCORING_OIDC_AUDIENCE", CLIENT_ID)
        svc = start_local_service(data_dir, embedder="hashing", worker=worker)
    try:
        yield svc
    finally:
        svc.stop()


@contextmanager
def run_worker(service: LocalService) -> Iterator[None]:
    """A `python -m service worker` over the service's data directory: it executes the queued runs."""
    env = {**os.environ, "SCORING_EMBEDDER": "hashing"}
    env.pop("SCORING_DATABASE_URL", None)  # the service's own database, in its data directory
    cmd = [sys.executable, "-m", "service", "worker", "--data-dir", str(service.data_dir), "--embedder",
           "hashing", "--parent-pid", str(os.getpid())]  # fmt: skip
    with (service.data_dir / "worker.log").open("ab") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            yield
        finally:
            stop(proc)


@contextmanager
def team_workbench(idp: Idp, service: LocalService, data_dir: Path) -> Iterator[str]:
    """The workbench in team mode on `service`, signing people in through `idp`: its URL."""
    env = {
        "SCORING_TEAM": "1",
        "SCORING_API_URL": service.url,
        "SCORING_DEMO": "0",
        "SCORING_OIDC_ISSUER": idp.issuer,
        "SCORING_OIDC_CLIENT_ID": CLIENT_ID,
        "SCORING_OIDC_CLIENT_SECRET": CLIENT_SECRET,
        # The browser opens the workbench at 127.0.0.1: the provider sends it back there (Streamlit puts in
        # its port), so its identity cookie is the page's.
        "SCORING_WORKBENCH_URL": "http://127.0.0.1:{port}",
    }
    secrets = write_auth_secrets(data_dir, env)  # what app.launch does before Streamlit starts
    assert secrets is not None
    with streamlit_app(data_dir, **env, STREAMLIT_SECRETS_FILES=str(secrets)) as url:
        yield url


def loaded(ui: Ui) -> None:
    """A page the browser was sent to (a sign-in's or sign-out's redirect): its first run has ended."""
    ui.page.wait_for_selector(IDLE, timeout=120_000)
    ui.idle()


def through_provider(ui: Ui, sub: str) -> None:
    """Press "Sign in", say who one is on the provider's page, and come back to the workbench."""
    page = ui.page
    page.get_by_role("heading", name="Sign in").first.wait_for()
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/oauth2/authorize"))  # the identity provider's own page
    page.locator("input[name='sub']").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/(\?.*)?$"))
    loaded(ui)


def sign_in(ui: Ui, sub: str, name: str) -> None:
    through_provider(ui, sub)
    ui.expect_text(f"Signed in as {name} ({email(sub)})")


def sign_out(ui: Ui) -> None:
    page = ui.page
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/oauth2/end_session"))  # the provider ends its session too
    page.get_by_role("button", name="End session").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/"))
    loaded(ui)
    ui.expect_heading("Sign in")


def label_counter(page: Page) -> Locator:
    """The Label page's caption under the text: "… N labelled this session …"."""
    return page.get_by_text(re.compile(r"labelled this session")).first
