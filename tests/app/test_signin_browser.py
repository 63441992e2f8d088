"""People sign in as themselves through the team's identity provider, in headless Chromium: a real OpenID
Connect provider on loopback (tests/support/idp.py), a real service that takes its ID tokens, one team
workbench.

Three people sign in in three browser contexts and each sees their own identity; a reload keeps one signed
in; one signs out and another signs in on the same tab, and sees nothing of the first: no counter of their
labels, no last label, and `u` has nothing of theirs to undo (their labels stay in the service); someone the
provider knows but no namespace has is told who they are, nothing more.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from core.client import Client
from core.local import LocalService
from tests.support.app import BROWSER, CASUAL, FORMAL, FORMALITY, Ui
from tests.support.idp import Idp
from tests.support.signin import (
    label_counter,
    loaded,
    oidc_service,
    provider_with,
    sign_in,
    sign_out,
    team_workbench,
    through_provider,
)

pytestmark = BROWSER

PEOPLE = {"alice": "Alice Archer", "bob": "Bob Baker", "carol": "Carol Cole"}
OUTSIDER = "dan"  # signs in, but no namespace has him
HANDLE = "local.requests"


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with provider_with(PEOPLE) as provider:
        provider.set_user(OUTSIDER, email=f"{OUTSIDER}@example.com", email_verified=True, name="Dan Dunn")
        yield provider


@pytest.fixture(scope="module")
def team_service(idp: Idp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    with oidc_service(idp, tmp_path_factory.mktemp("signin-service")) as svc:
        with svc.client() as owner:  # the operator's key adds the team (as `python -m service people` does)
            for sub in PEOPLE:
                owner.set_person_role(svc.namespace, f"{sub}@example.com", "owner")
            owner.create_model(HANDLE, description="Requests")
            owner.add_traits(HANDLE, [FORMALITY])
            owner.import_pool(HANDLE, FORMAL + CASUAL)
        yield svc


@pytest.fixture(scope="module")
def signin_app(
    idp: Idp, team_service: LocalService, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with team_workbench(idp, team_service, tmp_path_factory.mktemp("signin-workbench")) as url:
        yield url


def _sign_in(ui: Ui, sub: str) -> None:
    sign_in(ui, sub, PEOPLE[sub])


def test_three_people_sign_in_and_a_sign_out_leaves_nothing_to_the_next(
    signin_app: str, team_service: LocalService, browser: Browser
) -> None:
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in PEOPLE]
    uis: dict[str, Ui] = {}
    try:
        for sub, context in zip(PEOPLE, contexts, strict=True):
            ui = uis[sub] = Ui(context.new_page())
            ui.goto(signin_app)
            _sign_in(ui, sub)
            ui.no_exception()
        for sub, ui in uis.items():  # each browser shows its own person, not the last one signed in
            for other in set(PEOPLE) - {sub}:
                assert ui.page.get_by_text(f"{other}@example.com").count() == 0
        uis["alice"].shot("signin_three_people_alice")

        # A reload keeps a signed-in person signed in (Streamlit's identity cookie).
        alice = uis["alice"]
        alice.page.reload()
        loaded(alice)
        alice.expect_text("Signed in as Alice Archer (alice@example.com)")

        # bob labels three texts with the keyboard.
        bob = uis["bob"]
        sidebar = bob.page.locator("[data-testid='stSidebar']")
        expect(sidebar.get_by_role("combobox", name="Model")).to_have_value(HANDLE)
        bob.nav("Label")
        bob.page.locator("[data-testid='label-text']").first.wait_for()
        bob.keys_to_the_page()
        for n in range(1, 4):
            bob.page.keyboard.press("2")
            expect(label_counter(bob.page)).to_contain_text(f"{n} labelled this session")
            bob.settle()
        bob.expect_text("Added 1 sample(s).")  # his last label, as the page says it

        # bob signs out; carol signs in on the same tab and sees nothing of bob's.
        sign_out(bob)
        assert bob.page.get_by_text("bob@example.com").count() == 0
        _sign_in(bob, "carol")
        carol = bob
        carol.nav("Label")
        carol.page.locator("[data-testid='label-text']").first.wait_for()
        expect(label_counter(carol.page)).to_contain_text("0 labelled this session")
        assert carol.page.get_by_text("Added 1 sample(s).").count() == 0
        carol.keys_to_the_page()
        carol.page.keyboard.press("u")
        carol.expect_text("Nothing to undo.")
        carol.settle()
        carol.no_exception()
        carol.shot("signin_carol_after_bob")

        # Someone the provider knows but no namespace has: told who they are and whom to ask, nothing more.
        contexts.append(browser.new_context(viewport={"width": 1280, "height": 900}))
        outsider = uis[OUTSIDER] = Ui(contexts[-1].new_page())
        outsider.goto(signin_app)
        through_provider(outsider, OUTSIDER)
        outsider.page.get_by_role("heading", name="Not in a team yet").first.wait_for()
        outsider.expect_text(f"You are signed in as {OUTSIDER}@example.com")
        assert outsider.page.locator("[data-testid='stSidebarNav']").count() == 0
        with Client(team_service.url, team_service.api_key) as owner:  # an owner adds him: he is in
            owner.set_person_role(team_service.namespace, f"{OUTSIDER}@example.com", "annotator")
        outsider.click("Check again")
        outsider.expect_text(f"Signed in as Dan Dunn ({OUTSIDER}@example.com)")
        outsider.expect_text("Role in local: annotator")
    finally:
        for context in contexts:
            context.close()

    with Client(team_service.url, team_service.api_key) as owner:  # bob's labels stay, as his
        labels = [s for s in owner.list_samples(HANDLE) if s.annotator == "bob@example.com"]
    assert len(labels) == 3


def test_signing_out_in_one_tab_signs_out_every_tab_and_copied_cookie(
    signin_app: str, browser: Browser
) -> None:
    """alice has two tabs open and her cookies were copied to another browser; she signs out in the second
    tab. The first tab (not reloaded) shows her signed out at its next run, and the copied cookies open a
    signed-out page: the service refuses every token she had (POST /keys/current/sign-out)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    thief = browser.new_context(viewport={"width": 1280, "height": 900})
    tabs: list[Ui] = []
    try:
        first = Ui(context.new_page())
        tabs.append(first)
        first.goto(signin_app)
        _sign_in(first, "alice")
        second = Ui(context.new_page())
        tabs.append(second)
        second.goto(signin_app)
        second.expect_text("Signed in as Alice Archer (alice@example.com)")
        # Her cookies (Streamlit's `_streamlit_user` and its tokens), copied before she signs out.
        cookies = [c for c in context.cookies(signin_app) if c["name"].startswith("_streamlit_user")]
        assert cookies
        thief.add_cookies([{"name": c["name"], "value": c["value"], "url": signin_app} for c in cookies])

        sign_out(second)
        first.page.locator("[data-testid='stSidebarNav']").get_by_text("Models", exact=True).click()
        first.page.get_by_role("heading", name="Sign in").first.wait_for(timeout=60_000)
        assert first.page.get_by_text("Signed in as Alice Archer").count() == 0

        copied = Ui(thief.new_page())
        tabs.append(copied)
        copied.goto(signin_app)
        copied.page.get_by_role("heading", name="Sign in again").first.wait_for()
        copied.expect_text("You are signed out")
        assert copied.page.get_by_text("Signed in as Alice Archer").count() == 0
        assert copied.page.locator("[data-testid='stSidebarNav']").count() == 0
    finally:
        context.close()
        thief.close()


def test_a_key_pressed_after_signing_out_in_another_tab_says_it_was_not_stored(
    signin_app: str, team_service: LocalService, browser: Browser
) -> None:
    """carol labels in one tab and signs out in a second tab of the same browser; the first tab (not
    reloaded) gets the "You are signed out" page, at its status line's next read or at her next key press
    (which then says the label was not stored: tests/app/test_label_session.py), never a 401 under the
    buttons, and nothing more is stored."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tabs: list[Ui] = []
    try:
        first = Ui(context.new_page())
        tabs.append(first)
        first.goto(signin_app)
        _sign_in(first, "carol")
        first.nav("Label")
        first.page.locator("[data-testid='label-text']").first.wait_for()
        first.keys_to_the_page()
        first.page.keyboard.press("1")
        expect(label_counter(first.page)).to_contain_text("1 labelled this session")
        first.settle()
        with Client(team_service.url, team_service.api_key) as owner:
            before = len([s for s in owner.list_samples(HANDLE) if s.annotator == "carol@example.com"])

        second = Ui(context.new_page())
        tabs.append(second)
        second.goto(signin_app)
        second.expect_text("Signed in as Carol Cole (carol@example.com)")
        sign_out(second)

        first.page.bring_to_front()
        first.page.keyboard.press("2")  # the listener may be gone already: the page followed the sign-out
        first.page.get_by_role("heading", name="Sign in again").first.wait_for(timeout=60_000)
        first.expect_text("You are signed out")
        first.shot("signout_second_tab_press")
        assert first.page.get_by_text("AuthenticationError").count() == 0
        assert first.page.get_by_text("Reading the model failed").count() == 0
        with Client(team_service.url, team_service.api_key) as owner:
            after = len([s for s in owner.list_samples(HANDLE) if s.annotator == "carol@example.com"])
        assert after == before
    finally:
        context.close()
