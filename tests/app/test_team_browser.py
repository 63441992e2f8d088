"""A team's journey in headless Chromium: three people label one model, through the API and through one
workbench server in team mode, each in a browser of their own signed in with their own key, with overlap;
the agreement equals the `krippendorff` package on the same votes; a reviewer settles a disagreement; and
training uses one row per text."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import krippendorff
import numpy as np
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
LABELS_IN_THE_BROWSER = 8


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


def _label_in_the_browser(ui: Ui, name: str, count: int) -> int:
    """Label `count` texts with the keyboard, as `name` judges them; how many were routed from colleagues."""
    page = ui.page
    shown = page.locator("[data-testid='label-text']").first
    counter = page.get_by_text(re.compile(r"labelled this session")).first
    shared = 0
    for n in range(1, count + 1):
        text = shown.inner_text()
        if "a colleague labelled this one" in counter.inner_text():
            shared += 1
        page.keyboard.press("2" if RULES[name](text) else "1")
        expect(counter).to_contain_text(f"{n} labelled this session")
        ui.settle()
    return shared


def test_three_annotators_label_one_model_through_the_api_and_three_browsers(
    team_service: LocalService, team_app: str, browser: Browser, tmp_path: Path
) -> None:
    ns = team_service.namespace
    keys = {name: named_key(team_service.data_dir, ns, name) for name in RULES}
    handle = f"{ns}.politeness"
    # Through the API: the model, its pool, and the first labels (alice 40 texts, bob 20 of hers).
    with Client(team_service.url, keys["alice"]) as alice:
        alice.create_model(handle, description="Requests on a wiki's talk pages")
        alice.update_model(handle, overlap=0.2)  # the campaign's overlap, which the Label page follows
        alice.add_traits(
            handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
        )
        alice.import_pool(handle, POOL)
        first = POOL[::7][:40]
        alice.add_samples(
            handle, [{"trait": "politeness", "text": t, "quality": float(RULES["alice"](t))} for t in first]
        )
    with Client(team_service.url, keys["bob"]) as bob:
        bob.add_samples(
            handle,
            [{"trait": "politeness", "text": t, "quality": float(RULES["bob"](t))} for t in first[:20]],
        )

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
        routed = {}
        for name, ui in uis.items():
            # Within the session (a new address would be a new session, signed out): the sidebar's model,
            # then its Label page.
            sidebar = ui.page.locator("[data-testid='stSidebar']")
            expect(sidebar.get_by_role("combobox", name="Model")).to_have_value(handle)
            ui.nav("Label")
            ui.page.locator("[data-testid='label-text']").first.wait_for()
            ui.keys_to_the_page()
            routed[name] = _label_in_the_browser(ui, name, LABELS_IN_THE_BROWSER)
            ui.no_exception()
        assert routed["alice"] == 0  # nobody labelled a text she has not
        assert routed["bob"] >= 1 and routed["carol"] >= 1  # 20 % of their suggestions: colleagues' texts
        uis["carol"].shot("team_label_carol")

        # The agreement equals the krippendorff package on the same votes (each person's latest vote).
        with Client(team_service.url, keys["alice"]) as alice:
            stored = list(alice.list_samples(handle))
            got = alice.agreement(handle).traits["politeness"]
        latest: dict[tuple[str, str], float] = {}
        for s in sorted(stored, key=lambda s: s.id):
            assert s.annotator in RULES
            latest[(s.annotator, s.text)] = s.quality
        texts = sorted({t for _, t in latest})
        matrix = np.array([[latest.get((a, t), np.nan) for t in texts] for a in sorted(RULES)])
        assert got.texts_with_votes == int((np.sum(~np.isnan(matrix), axis=0) >= 2).sum()) >= 22
        want = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
        assert got.krippendorff_alpha_interval == pytest.approx(want, abs=1e-6)
        want_nominal = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
        assert got.krippendorff_alpha_nominal == pytest.approx(want_nominal, abs=1e-6)
        assert [a.annotator for a in got.annotators] == sorted(RULES)

        # alice sees it on the Traits page, and settles the most disagreed text on the Samples page.
        ui = uis["alice"]
        ui.nav("Traits")
        ui.expect_text("Agreement between annotators")
        ui.nav("Samples")
        ui.tab("Disagreements")
        worst = got.disagreed[0].text
        ui.expect_text(worst)
        ui.page.get_by_role("button", name="Settle: polite").first.click()
        ui.settle()
        ui.expect_text("your vote decides its pole")
        ui.no_exception()
        # The settled card offers no Settle button once the run that settled it has ended, not at a later one.
        card = ui.page.locator(".st-key-disagree_card_0")
        assert "settled" in card.inner_text()
        assert card.get_by_role("button", name=re.compile("^Settle: ")).count() == 0
        ui.shot("team_disagreements")

        # bob's tab is reloaded (a key's sign-in ends with it) on the Label page, and carol signs in there:
        # she is back on the Label page, and its count is hers, not one from bob's session in the address.
        tab = uis["bob"]
        tab.page.reload()
        _type_key(tab, keys["carol"])
        tab.expect_text("Signed in as carol")
        tab.page.locator("[data-testid='label-text']").first.wait_for()
        expect(tab.page.get_by_text(re.compile(r"labelled this session")).first).to_contain_text(
            "0 labelled this session"
        )
        tab.no_exception()
        tab.shot("team_label_carol_after_bob")

        # carol signs out: her browser asks again; the others stay signed in (her key in bob's tab too).
        uis["carol"].page.get_by_role("button", name="Sign out").click()
        uis["carol"].settle()
        uis["carol"].page.get_by_role("heading", name="Sign in").first.wait_for()
        assert uis["alice"].page.get_by_text("Signed in as alice").count() == 1
        assert tab.page.get_by_text("Signed in as carol").count() == 1
    finally:
        for context in contexts:
            context.close()

    # Training uses one row per text: the counted votes, the adjudicated one deciding its text.
    with Client(team_service.url, keys["alice"]) as alice:
        alice.wait(handle, alice.train(handle, "low").run_id, timeout=300)
        metrics = alice.get_version(handle, 1).trait_metrics["politeness"]
        stored = list(alice.list_samples(handle))
    assert metrics["texts"] == len({s.text for s in stored})
    assert metrics["votes"] == len({(s.annotator, s.text) for s in stored})
    settled = [s for s in stored if s.adjudicated]
    assert [(s.text, s.quality, s.annotator) for s in settled] == [(worst, 1.0, "alice")]
