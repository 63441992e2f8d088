"""A team's labelling week in headless Chromium: three people signed in through the team's identity provider
(tests/support/idp.py, a real OpenID Connect provider on loopback; a real service that takes its ID tokens)
label one trained model of realistic size on one workbench, each in a browser of their own, while its owner,
signed in in a fourth, pauses automatic retraining and trains a new version through the API.

No text is shown to two people (one vote wanted: each text goes to one person), no key press is refused
(every label is stored, also the ones given while the training runs), no automatic version is made while
retraining is paused, and the Team page counts each person's labels as the API does.

Then, on the same workbench, signing in and out: each of three browser contexts sees its own person; a reload
keeps one signed in; one signs out and another signs in on the same tab, and sees nothing of the first: no
counter of their labels, no last label, and `u` has nothing of theirs to undo (their labels stay in the
service); someone the provider knows but no namespace has is told who they are, nothing more; a sign-out in
one tab signs out the others and copied cookies, and a key pressed in such a tab stores nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from core.client import Client
from core.demo import read_demo_model
from core.local import LocalService
from tests.support.app import BROWSER, SUPPORT_REPLIES, Ui, pause
from tests.support.idp import Idp
from tests.support.signin import (
    email,
    label_counter,
    loaded,
    oidc_service,
    provider_with,
    run_worker,
    sign_in,
    sign_out,
    team_workbench,
    through_provider,
)
from tests.support.team_pages import page_errors, polite, shown_text

pytestmark = BROWSER

LABELLERS = {"alice": "Alice Archer", "bob": "Bob Baker", "carol": "Carol Cole"}
ROLES = {"alice": "annotator", "bob": "annotator", "carol": "reviewer", "olive": "owner"}
OWNER = "olive"
NAMES = {**LABELLERS, OWNER: "Olive Owens"}
OUTSIDER = "dan"  # signs in, but no namespace has him (until an owner adds him)
HANDLE = "local.support-week"

POOL = SUPPORT_REPLIES  # 300 support replies, none of them one of the model's samples

# Rounds of labels: while the owner's training is queued (no worker yet: deterministically in flight), while
# a worker executes it (or has just ended it), and after it has ended.
HELD, DURING, AFTER = 3, 6, 1


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with provider_with(NAMES) as provider:
        provider.set_user(OUTSIDER, email=email(OUTSIDER), email_verified=True, name="Dan Dunn")
        yield provider


@pytest.fixture(scope="module")
def week_service(idp: Idp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """The team and a trained model: the support-replies demo's 240 samples (three traits), v1 serving, and
    a pool of 300 texts to label. Its runs wait for a worker the test starts."""
    demo = read_demo_model("support_replies")
    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as env:  # the service's setting, read when it starts
            # The texts each page shows stay held for the walk's length, however slow the machine: a lease
            # running out on a busy one handed them to others (the walk asserts they are held).
            env.setenv("SCORING_CLAIM_LEASE_S", "3600")
            svc = stack.enter_context(
                oidc_service(idp, tmp_path_factory.mktemp("week-service"), worker=False)
            )
        with (
            svc.client() as operator
        ):  # the operator's key adds the team (as `python -m service people` does)
            for sub, role in ROLES.items():
                operator.set_person_role(svc.namespace, email(sub), role)
            operator.create_model(HANDLE, description=demo.description)
            key_of = {t.name: t.key for t in operator.add_traits(HANDLE, [dict(t) for t in demo.traits])}
            rows = [
                {"trait": key_of[s["trait"]], "text": s["text"], "quality": s["quality"]}
                for s in demo.samples
            ]
            assert not operator.import_samples(HANDLE, rows).errors
            operator.import_pool(HANDLE, POOL)
            with run_worker(svc):
                operator.wait(HANDLE, operator.train(HANDLE, "low").run_id, timeout=300)
        yield svc


@pytest.fixture(scope="module")
def week_app(idp: Idp, week_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with team_workbench(idp, week_service, tmp_path_factory.mktemp("week-workbench")) as url:
        yield url


def _status(page: Page) -> Locator:
    """The Label page's status line (refreshed by itself every few seconds)."""
    return page.get_by_text(re.compile(r"v\d+ serving|no version yet")).first


def _to_the_label_page(ui: Ui) -> str:
    """Open the Label page of the sidebar's model; the text it shows first."""
    sidebar = ui.page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_role("combobox", name="Model")).to_have_value(HANDLE)
    ui.nav("Label")
    shown_text(ui.page).wait_for()
    return shown_text(ui.page).inner_text()


def _progress_table(page: Page) -> dict[tuple[str, str], int]:
    """The Team page's progress table as the grid's accessible mirror has it: (person, trait) -> labels."""
    grid = page.locator("[data-testid='stDataFrame']").first
    table = grid.locator("table[role='grid']").first
    table.wait_for(state="attached")
    header = [c.strip() for c in table.locator("thead th").all_inner_texts()]
    rows = {}
    for row in table.locator("tbody tr").all():
        cells = dict(zip(header, (c.strip() for c in row.locator("td").all_inner_texts()), strict=False))
        rows[(cells["person"], cells["trait"])] = int(cells["labels"])
    return rows


def test_three_people_label_while_the_owner_trains_with_retraining_paused(
    week_app: str, week_service: LocalService, browser: Browser, person: random.Random
) -> None:
    owner_api = Client(week_service.url, week_service.api_key)
    contexts: list[BrowserContext] = []
    uis: dict[str, Ui] = {}
    worker = contextlib.ExitStack()  # kept to the end: an automatic retraining, if one started, would run
    try:
        for sub in (OWNER, *LABELLERS):
            contexts.append(browser.new_context(viewport={"width": 1280, "height": 1000}))
            ui = uis[sub] = Ui(contexts[-1].new_page())
            ui.goto(week_app)
            sign_in(ui, sub, NAMES[sub])
        trait = owner_api.list_traits(HANDLE)[0].key  # the Label page's first trait
        versions = len(list(owner_api.list_versions(HANDLE)))
        assert versions == 1

        # Automatic retraining is off on a team's model until its owner turns it on: the owner saves the
        # campaign settings of the Team page as they are, retraining off.
        owner = uis[OWNER]
        owner.nav("Team")
        owner.click("Save campaign settings")
        owner.expect_text("Saved: 1 vote per text · no overlap · automatic retraining paused")
        assert owner_api.get_model(HANDLE).auto_retrain is False
        shown: dict[str, list[str]] = {OWNER: [_to_the_label_page(owner)]}
        expect(_status(owner.page)).to_contain_text("automatic retraining paused")

        for sub in LABELLERS:
            ui = uis[sub]
            shown[sub] = [_to_the_label_page(ui)]
            expect(_status(ui.page)).to_contain_text("automatic retraining paused")
            ui.keys_to_the_page()

        # The owner trains a new version; meanwhile the three label, their key presses interleaved.
        # (Buffered labels are no change to train on: a new version of unchanged samples is a retune.)
        run = owner_api.train(HANDLE, "low", reoptimize_params=True)
        assert run.run_id is not None, run
        in_flight: dict[int, int] = {}  # round -> labels the page said wait for the run in flight
        for n in range(1, DURING + AFTER + 1):
            if n == HELD + 1:  # a worker comes: the run executes while they go on
                worker.enter_context(run_worker(week_service))
            if n == DURING + 1:  # the last round: the training has ended, the model is ready and paused
                owner_api.wait(HANDLE, run.run_id, timeout=300)
            order = list(LABELLERS)
            person.shuffle(order)
            for sub in order:
                page = uis[sub].page
                text = shown_text(page).inner_text()
                assert text == shown[sub][-1]  # the text the page showed since its last label
                pause(page, person.uniform(80, 500))  # reading it
                page.keyboard.press("2" if polite(text) else "1")
            for sub in order:
                ui = uis[sub]
                expect(label_counter(ui.page)).to_contain_text(f"{n} labelled this session")
                ui.settle()
                assert page_errors(ui.page) == [], (sub, n)
                message = ui.page.get_by_text(re.compile(r"^Sent as feedback")).first.inner_text()
                in_flight[n] = in_flight.get(n, 0) + ("A run is in flight" in message)
                shown[sub].append(shown_text(ui.page).inner_text())
        print(f"labels said in flight per round: {in_flight}")
        assert all(in_flight[n] == len(LABELLERS) for n in range(1, HELD + 1)), in_flight
        assert in_flight[DURING + AFTER] == 0, in_flight

        # No automatic version while paused: the only new one is the owner's; the status lines follow.
        model = owner_api.get_model(HANDLE)
        assert (model.state, model.auto_retrain, model.version_no) == ("ready", False, 2)
        assert model.last_operation is not None and model.last_operation.run_id == run.run_id
        assert len(list(owner_api.list_versions(HANDLE))) == versions + 1
        for sub in LABELLERS:
            expect(_status(uis[sub].page)).to_contain_text("v2 serving")

        # No text shown to two people: each page's texts (the labelled ones and the one showing now).
        for a, b in itertools.combinations(shown, 2):
            assert not set(shown[a]) & set(shown[b]), (a, b)
        # Every label stored, once, as its person's; nobody else voted on those texts.
        votes = [v for v in owner_api.votes(HANDLE) if v.trait == trait and v.text in POOL]
        for sub in LABELLERS:
            given = shown[sub][:-1]
            assert len(set(given)) == DURING + AFTER
            mine = {v.text: v.quality for v in votes if v.annotator == email(sub)}
            assert mine == {t: float(polite(t)) for t in given}, sub
        assert max(Counter(v.text for v in votes).values()) == 1
        # The texts the pages show now are held for them: a suggestion to anyone else leaves them out.
        held = {shown[sub][-1] for sub in shown}
        offered = owner_api.suggest(HANDLE, trait, k=100)
        assert not held & {s.text for s in offered.items}
        assert offered.unlabelled == len(POOL) - len(votes)

        # The Team page counts each person's labels as the API does.
        owner.nav("Team")
        owner.page.get_by_role("heading", name="Team progress").wait_for()
        api = {(p.annotator, p.trait): p.labels for p in owner_api.team_progress(HANDLE).people}
        for sub in LABELLERS:
            assert api[(email(sub), trait)] == DURING + AFTER
        assert _progress_table(owner.page) == api
        # Its figures as a person reads them (whole seconds, percentages), never the service's raw floats;
        # the empty-table wording is for signed-in people, not keys.
        cells = owner.page.locator("[data-testid='stDataFrame']").first.locator("tbody").first.inner_text()
        assert re.search(r"\d+ s", cells) and not re.search(r"\d\.\d{3}", cells), cells  # cells run together
        assert owner.page.get_by_text("named key").count() == 0
        # The votes download starts at a press, as a person's browser downloads it.
        owner.click("Prepare the vote export")
        with owner.page.expect_download(timeout=60_000) as download:
            owner.page.get_by_role("button", name="Download every vote (CSV)").click()
        exported = Path(download.value.path()).read_text("utf-8").splitlines()
        assert exported[0].startswith("annotator,trait,text,") and len(exported) > len(votes), exported[:2]
        owner.no_exception()

        # The labels given since v2 wait, retraining paused: the owner trains them in with one button.
        waiting = owner_api.get_model(HANDLE).buffered_feedback or 0
        assert waiting > 0
        owner.nav("Training")
        train = owner.page.get_by_role("button", name=re.compile(r"^Train the (\d+ )?waiting labels?$"))
        expect(train).to_be_enabled()
        train.click()
        owner.settle()
        trained = owner_api.wait(HANDLE, timeout=300)
        # Review is on: accepted labels went in; proposals nobody accepted yet wait on.
        assert trained.version_no == 3 and (trained.buffered_feedback or 0) < waiting, (trained, waiting)

    finally:
        owner_api.close()
        worker.close()
        for context in contexts:
            context.close()


# -- signing in and out, on the same workbench (after the week: its labels are counted as they were) --------

FEEDBACK = re.compile(r"^Sent as feedback")  # a label's message on a trained model (its last label, said)


def _labels_of(service: LocalService, sub: str) -> int:
    """How many labels `sub` has given the model, as the service keeps them."""
    with Client(service.url, service.api_key) as owner:
        return len([v for v in owner.votes(HANDLE) if v.annotator == email(sub)])


def test_three_people_sign_in_and_a_sign_out_leaves_nothing_to_the_next(
    week_app: str, week_service: LocalService, browser: Browser
) -> None:
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in LABELLERS]
    uis: dict[str, Ui] = {}
    try:
        for sub, context in zip(LABELLERS, contexts, strict=True):
            ui = uis[sub] = Ui(context.new_page())
            ui.goto(week_app)
            sign_in(ui, sub, NAMES[sub])
            ui.no_exception()
        for sub, ui in uis.items():  # each browser shows its own person, not the last one signed in
            for other in set(LABELLERS) - {sub}:
                assert ui.page.get_by_text(email(other)).count() == 0

        # A reload keeps a signed-in person signed in (Streamlit's identity cookie).
        alice = uis["alice"]
        alice.page.reload()
        loaded(alice)
        alice.expect_text("Signed in as Alice Archer (alice@example.com)")

        # bob labels three texts with the keyboard.
        bob = uis["bob"]
        before = _labels_of(week_service, "bob")
        _to_the_label_page(bob)
        bob.keys_to_the_page()
        for n in range(1, 4):
            bob.page.keyboard.press("2")
            expect(label_counter(bob.page)).to_contain_text(f"{n} labelled this session")
            bob.settle()
        expect(bob.page.get_by_text(FEEDBACK).first).to_be_visible()  # his last label, as the page says it

        # bob signs out; carol signs in on the same tab and sees nothing of bob's.
        sign_out(bob)
        assert bob.page.get_by_text(email("bob")).count() == 0
        sign_in(bob, "carol", NAMES["carol"])
        carol = bob
        _to_the_label_page(carol)
        expect(label_counter(carol.page)).to_contain_text("0 labelled this session")
        assert carol.page.get_by_text(FEEDBACK).count() == 0
        carol.keys_to_the_page()
        carol.page.keyboard.press("u")
        carol.expect_text("Nothing to undo.")
        carol.settle()
        carol.no_exception()

        # Someone the provider knows but no namespace has: told who they are and whom to ask, nothing more.
        contexts.append(browser.new_context(viewport={"width": 1280, "height": 900}))
        outsider = uis[OUTSIDER] = Ui(contexts[-1].new_page())
        outsider.goto(week_app)
        through_provider(outsider, OUTSIDER)
        outsider.page.get_by_role("heading", name="Not in a team yet").first.wait_for()
        outsider.expect_text(f"You are signed in as {email(OUTSIDER)}")
        assert outsider.page.locator("[data-testid='stSidebarNav']").count() == 0
        with Client(week_service.url, week_service.api_key) as owner:  # an owner adds him: he is in
            owner.set_person_role(week_service.namespace, email(OUTSIDER), "annotator")
        outsider.click("Check again")
        outsider.expect_text(f"Signed in as Dan Dunn ({email(OUTSIDER)})")
        outsider.expect_text("Role in local: annotator")
    finally:
        for context in contexts:
            context.close()

    assert _labels_of(week_service, "bob") == before + 3  # bob's labels stay, as his


def test_signing_out_in_one_tab_signs_out_every_tab_and_copied_cookie(
    week_app: str, browser: Browser
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
        first.goto(week_app)
        sign_in(first, "alice", NAMES["alice"])
        second = Ui(context.new_page())
        tabs.append(second)
        second.goto(week_app)
        second.expect_text("Signed in as Alice Archer (alice@example.com)")
        # Her cookies (Streamlit's `_streamlit_user` and its tokens), copied before she signs out.
        cookies = [c for c in context.cookies(week_app) if c["name"].startswith("_streamlit_user")]
        assert cookies
        thief.add_cookies([{"name": c["name"], "value": c["value"], "url": week_app} for c in cookies])

        sign_out(second)
        first.page.locator("[data-testid='stSidebarNav']").get_by_text("Models", exact=True).click()
        first.page.get_by_role("heading", name="Sign in").first.wait_for(timeout=60_000)
        assert first.page.get_by_text("Signed in as Alice Archer").count() == 0

        copied = Ui(thief.new_page())
        tabs.append(copied)
        copied.goto(week_app)
        copied.page.get_by_role("heading", name="Sign in again").first.wait_for()
        copied.expect_text("You are signed out")
        assert copied.page.get_by_text("Signed in as Alice Archer").count() == 0
        assert copied.page.locator("[data-testid='stSidebarNav']").count() == 0
    finally:
        context.close()
        thief.close()


def test_a_key_pressed_after_signing_out_in_another_tab_says_it_was_not_stored(
    week_app: str, week_service: LocalService, browser: Browser
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
        first.goto(week_app)
        sign_in(first, "carol", NAMES["carol"])
        _to_the_label_page(first)
        first.keys_to_the_page()
        first.page.keyboard.press("1")
        expect(label_counter(first.page)).to_contain_text("1 labelled this session")
        first.settle()
        before = _labels_of(week_service, "carol")

        second = Ui(context.new_page())
        tabs.append(second)
        second.goto(week_app)
        second.expect_text("Signed in as Carol Cole (carol@example.com)")
        sign_out(second)

        first.page.bring_to_front()
        first.page.keyboard.press("2")  # the listener may be gone already: the page followed the sign-out
        first.page.get_by_role("heading", name="Sign in again").first.wait_for(timeout=60_000)
        first.expect_text("You are signed out")
        assert first.page.get_by_text("AuthenticationError").count() == 0
        assert first.page.get_by_text("Reading the model failed").count() == 0
        assert _labels_of(week_service, "carol") == before
    finally:
        context.close()
