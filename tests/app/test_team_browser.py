"""A team's keys in headless Chromium: three people sign in to one workbench server in team mode, each in a
browser of their own with their own key typed in, and label one model; a reload on the Label page ends a
key's sign-in, and the next person's count there is theirs; a sign-out leaves the others signed in.

Where the rest of a team's rules are walked: overlap routing and the agreement (tests/app/test_team_pages.py,
tests/service/test_team.py), settling disagreements (tests/app/test_review_browser.py), people signed in
through an identity provider (tests/app/test_team_week_browser.py)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from core.client import Client
from core.local import LocalService, start_local_service
from harness.streamlit import streamlit_app
from tests.support.app import BROWSER, Ui, named_key

pytestmark = BROWSER

OPENINGS = ["Could you please", "Please", "Hey,", "Can you", "I need you to", "Would you kindly"]
TASKS = [
    "send me the report from Monday",
    "fix the broken link on the front page",
    "review my edit to the history section",
    "explain why my change was reverted",
    "add a source for the population figure",
    "merge the two duplicate articles",
    "check the spelling in the second paragraph",
    "answer my question on the talk page",
    "move the page to its new title",
    "look at the dispute about the map",
]
ENDINGS = ["Thanks!", "", "ASAP.", "Thank you so much.", "Now."]
POOL = [" ".join(p for p in (o, t, e) if p) for o, t, e in itertools.product(OPENINGS, TASKS, ENDINGS)]  # 300

# How each person judges a request (they disagree on some): polite (True) or not.
RULES: dict[str, Callable[[str], bool]] = {
    "alice": lambda t: "please" in t.lower() or "thank" in t.lower() or "kindly" in t.lower(),
    "bob": lambda t: "please" in t.lower() or t.endswith("Thanks!"),
    "carol": lambda t: not (t.startswith(("Hey", "I need")) or t.endswith(("Now.", "ASAP."))),
}
LABELS_IN_THE_BROWSER = 3


@pytest.fixture(scope="module")
def team_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    svc = start_local_service(tmp_path_factory.mktemp("team-service"), embedder="hashing")
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def team_app(team_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("team-workbench")
    with streamlit_app(data, SCORING_TEAM="1", SCORING_API_URL=team_service.url, SCORING_DEMO="0") as url:
        yield url


def _sign_in(page: Page, url: str, key: str) -> Ui:
    ui = Ui(page)
    ui.goto(url)
    _type_key(ui, key)
    return ui


def _type_key(ui: Ui, key: str) -> None:
    ui.page.get_by_role("heading", name="Sign in").first.wait_for()
    box = ui.page.get_by_label("Your API key", exact=True)
    box.click()
    box.press_sequentially(key, delay=15)  # typed (pasted keys are typed too: the form gets every key)
    ui.click("Sign in")


def _label_in_the_browser(ui: Ui, name: str, count: int) -> None:
    """Label `count` texts with the keyboard, as `name` judges them."""
    page = ui.page
    shown = page.locator("[data-testid='label-text']").first
    counter = page.get_by_text(re.compile(r"labelled this session")).first
    for n in range(1, count + 1):
        page.keyboard.press("2" if RULES[name](shown.inner_text()) else "1")
        expect(counter).to_contain_text(f"{n} labelled this session")
        ui.settle()


def test_three_annotators_sign_in_with_their_keys_and_label_in_three_browsers(
    team_service: LocalService, team_app: str, browser: Browser
) -> None:
    ns = team_service.namespace
    keys = {name: named_key(team_service.data_dir, ns, name) for name in RULES}
    handle = f"{ns}.politeness"
    with Client(team_service.url, keys["alice"]) as alice:  # through the API: the model and its pool
        alice.create_model(handle, description="Requests on a wiki's talk pages")
        alice.add_traits(
            handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
        )
        alice.import_pool(handle, POOL)

    # Through the browser: three people, three browser contexts, one workbench server, each their own key.
    contexts = [browser.new_context(viewport={"width": 1280, "height": 800}) for _ in RULES]
    uis: dict[str, Ui] = {}
    try:
        for (name, key), context in zip(keys.items(), contexts, strict=True):
            ui = _sign_in(context.new_page(), team_app, key)
            ui.expect_text(f"Signed in as {name}")
            ui.no_exception()
            uis[name] = ui
        for name, ui in uis.items():  # each browser shows its own person, not the last one signed in
            assert ui.page.get_by_text(f"Signed in as {name}").count() == 1
            for other in set(RULES) - {name}:
                assert ui.page.get_by_text(f"Signed in as {other}").count() == 0
        for name, ui in uis.items():
            # Within the session (a new address would be a new session, signed out): the sidebar's model,
            # then its Label page.
            sidebar = ui.page.locator("[data-testid='stSidebar']")
            expect(sidebar.get_by_role("combobox", name="Model")).to_have_value(handle)
            ui.nav("Label")
            ui.page.locator("[data-testid='label-text']").first.wait_for()
            ui.keys_to_the_page()
            _label_in_the_browser(ui, name, LABELS_IN_THE_BROWSER)
            ui.no_exception()
        with Client(team_service.url, keys["alice"]) as alice:  # each label stored as its key's person's
            stored = Counter(s.annotator for s in alice.list_samples(handle))
        assert stored == dict.fromkeys(RULES, LABELS_IN_THE_BROWSER)

        # bob's tab is reloaded (a key's sign-in ends with it) on the Label page, and carol signs in there:
        # she is back on the Label page, and its count is hers, not one from bob's session in the address
        # (she labelled after his session started: that count would not be 0).
        tab = uis["bob"]
        tab.page.reload()
        _type_key(tab, keys["carol"])
        tab.expect_text("Signed in as carol")
        tab.page.locator("[data-testid='label-text']").first.wait_for()
        expect(tab.page.get_by_text(re.compile(r"labelled this session")).first).to_contain_text(
            "0 labelled this session"
        )
        tab.no_exception()

        # carol signs out: her browser asks again; the others stay signed in (her key in bob's tab too).
        uis["carol"].click("Sign out")
        uis["carol"].expect_heading("Sign in")
        assert uis["alice"].page.get_by_text("Signed in as alice").count() == 1
        assert tab.page.get_by_text("Signed in as carol").count() == 1
    finally:
        for context in contexts:
            context.close()
