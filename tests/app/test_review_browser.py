"""A reviewed team campaign in headless Chromium, people signed in through the team's identity provider
(tests/support/idp.py): three annotators label a draft of realistic size (the support-replies demo's 240
samples and a pool of 300 texts) on one workbench, each in a browser of their own; its owner, in a fourth,
changes the campaign on the Team page while they label (votes wanted, overlap, blind labelling), then reviews
their labels on the Team page: accepts one, rejects one with a comment, accepts several at once (the author
reading the comment: tests/app/test_role_pages.py); the acceptance rate per person is the API's; the
training takes accepted labels only (the Training page's contested texts leading to the Samples page, where
one is settled: tests/app/test_navigation.py). Then two reviewers settle the same text at once (the loser
told in that text's card), and a text settled on the wrong pole, promoted to gold, is found in the Team
page's gold list and removed.

What each page shows is checked against the API."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core.client import Client
from core.demo import read_demo_model
from core.local import LocalService
from tests.support.app import BROWSER, SUPPORT_REPLIES, Ui, pause
from tests.support.idp import Idp
from tests.support.signin import (
    email,
    label_counter,
    oidc_service,
    provider_with,
    sign_in,
    team_workbench,
)
from tests.support.team_pages import open_model, page_errors, polite, shown_text, table_rows

pytestmark = BROWSER

ANNOTATORS = {"alice": "Alice Archer", "bob": "Bob Baker", "carol": "Carol Cole"}
OWNER = "olive"
REVIEWER = "rhea"
NAMES = {**ANNOTATORS, OWNER: "Olive Owens", REVIEWER: "Rhea Reyes"}
HANDLE = "local.reviewed-replies"
COMMENT = "An apology is polite: read the guidelines again."

POOL = SUPPORT_REPLIES  # 300 support replies, none of them one of the model's samples
# One reply a file rated both ways (two rows): training counts it contested until someone settles it.
TWICE = "We looked into it and there is nothing more we can do for you."
# Labels each annotator gives before the owner changes the campaign, and after.
BEFORE, AFTER = 3, 3


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with provider_with(NAMES) as provider:
        yield provider


@pytest.fixture(scope="module")
def review_service(idp: Idp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """The team and an untrained model: the demo's samples and the file's contradiction, imported by the
    operator (accepted as they are), and the pool; 20 % overlap, one vote wanted."""
    demo = read_demo_model("support_replies")
    with oidc_service(idp, tmp_path_factory.mktemp("review-service")) as svc:
        with (
            svc.client() as operator
        ):  # the operator's key adds the team (as `python -m service people` does)
            for sub in ANNOTATORS:
                operator.set_person_role(svc.namespace, email(sub), "annotator")
            operator.set_person_role(svc.namespace, email(OWNER), "owner")
            operator.set_person_role(svc.namespace, email(REVIEWER), "reviewer")
            operator.create_model(HANDLE, description=demo.description)
            operator.update_model(HANDLE, overlap=0.2)
            key_of = {t.name: t.key for t in operator.add_traits(HANDLE, [dict(t) for t in demo.traits])}
            rows = [{**s, "trait": key_of[s["trait"]]} for s in demo.samples]
            rows += [{"trait": key_of["Politeness"], "text": TWICE, "quality": q} for q in (1.0, 0.0)]
            assert not operator.import_samples(HANDLE, rows, provenance="imported").errors
            operator.import_pool(HANDLE, POOL)
        yield svc


@pytest.fixture(scope="module")
def review_app(
    idp: Idp, review_service: LocalService, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with team_workbench(idp, review_service, tmp_path_factory.mktemp("review-workbench")) as url:
        yield url


def _label_round(uis: dict[str, Ui], person: random.Random, done: int, given: dict[str, list[str]]) -> None:
    """Each annotator, in a random order, reads the text shown and presses the key for it; then each page
    has counted the label and shows the next text."""
    order = list(ANNOTATORS)
    person.shuffle(order)
    for sub in order:
        page = uis[sub].page
        text = shown_text(page).inner_text()
        pause(page, person.uniform(80, 500))  # reading it
        page.keyboard.press("2" if polite(text) else "1")
        given[sub].append(text)
    for sub in order:
        ui = uis[sub]
        expect(label_counter(ui.page)).to_contain_text(f"{done} labelled this session")
        ui.settle()
        assert page_errors(ui.page) == [], (sub, done)


def _choose(ui: Ui, n: int) -> None:
    """Open the multiselect's list and click its option numbered `n`, as a person does: a click on a page
    being drawn can miss the box, and a run that draws the page anew closes an open list; then they click
    again (a few times at most: a list that never opens still fails, with Playwright's message)."""
    box = ui.page.get_by_label("Labels to decide")
    listbox = ui.page.get_by_role("listbox")
    option = ui.page.get_by_role("option", name=re.compile(rf"^{n}\. "))
    for _ in range(4):
        try:
            if not listbox.count():
                box.click()
                listbox.wait_for(timeout=5_000)
            option.click(timeout=10_000)
            return
        except PlaywrightTimeout:
            ui.idle()
    if not listbox.count():
        box.click()
    option.click()


def _pick(ui: Ui, numbers: list[int]) -> None:
    """Pick the review queue's labels numbered `numbers` (1-based, as the list says) in its multiselect."""
    ui.idle()  # a list opened during a run closes when the run draws the page anew
    for n in numbers:
        _choose(ui, n)
        ui.settle()
        # A person sees the pick among the chosen (a click on a list being redrawn can miss), else picks
        # again. A chip, not its Remove button: the chips leave the accessibility tree while the list is open.
        chip = ui.page.locator("[data-testid='stMultiSelect'] [data-tag]").filter(
            has_text=re.compile(rf"^{n}\. ")
        )
        try:
            chip.wait_for(timeout=5_000)
        except PlaywrightTimeout:
            _choose(ui, n)
            ui.settle()
            chip.wait_for()
    ui.page.keyboard.press("Escape")  # the list closes; the picks go with the press (one form)
    expect(ui.page.get_by_role("listbox")).to_have_count(0)
    # And the focus leaves the box, as a person's eyes go to the buttons: the box is drawn lower while it has
    # the focus, so a press made then lands where the buttons were before the box let go of it.
    ui.page.keyboard.press("Tab")
    expect(ui.page.get_by_label("Labels to decide")).not_to_be_focused()


def test_a_reviewed_campaign_changes_while_three_label_and_the_owner_reviews(
    review_app: str, review_service: LocalService, browser: Browser, person: random.Random
) -> None:
    api = Client(review_service.url, review_service.api_key)
    contexts: list[BrowserContext] = []
    uis: dict[str, Ui] = {}
    try:
        trait = api.list_traits(HANDLE)[0]  # Politeness: the Label page's first trait
        model = api.get_model(HANDLE)
        assert (model.review, model.accept_rule, model.auto_retrain) == (True, "none", False)  # a team's
        for sub in (OWNER, *ANNOTATORS):
            contexts.append(browser.new_context(viewport={"width": 1280, "height": 1000}))
            ui = uis[sub] = Ui(contexts[-1].new_page())
            ui.goto(review_app)
            sign_in(ui, sub, NAMES[sub])
        for sub in ANNOTATORS:
            ui = uis[sub]
            expect(
                ui.page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Model")
            ).to_have_value(HANDLE)
            ui.nav("Label")
            shown_text(ui.page).wait_for()
            ui.expect_text("a proposal")  # the page says labels wait for review before they train
            ui.keys_to_the_page()
        given: dict[str, list[str]] = {sub: [] for sub in ANNOTATORS}
        for n in range(1, BEFORE + 1):
            _label_round(uis, person, n, given)
        uis["alice"].expect_text("It is a proposal: it trains once a reviewer accepts it.")

        # The owner changes the campaign on the Team page while the three are at work.
        owner = uis[OWNER]
        owner.nav("Team")
        form = owner.page.locator("[data-testid='stForm']").first
        votes = form.get_by_label("Votes wanted per text", exact=True)
        votes.fill("2")
        overlap = form.get_by_role("slider", name="Overlap with colleagues")
        overlap.focus()
        for _ in range(6):  # 20 % -> 50 %, in steps of 5
            overlap.press("ArrowRight")
        form.get_by_text("Blind labelling", exact=True).click()
        owner.click("Save campaign settings")
        owner.expect_text("Saved: 2 votes per text · 50% of suggestions shared with colleagues")
        changed = api.get_model(HANDLE)
        assert (changed.votes_wanted, changed.overlap, changed.blind_labelling) == (2, 0.5, True)
        assert (changed.review, changed.accept_rule) == (True, "none")

        # Every open Label page follows the campaign at its next run (its status line refreshes by itself).
        for sub in ANNOTATORS:
            ui = uis[sub]
            ui.page.get_by_text("Texts wanting 2 votes for Politeness").first.wait_for()
            ui.page.get_by_text(re.compile(r"2 votes wanted per text")).first.wait_for()
            expect(label_counter(ui.page)).to_contain_text(f"{BEFORE} labelled this session")
            ui.idle()
            ui.keys_to_the_page()
        for n in range(BEFORE + 1, BEFORE + AFTER + 1):
            _label_round(uis, person, n, given)
        for sub in ANNOTATORS:
            uis[sub].no_exception()

        # Every press stored once, as its person's, pending; no text labelled twice by one person, none more
        # often than the campaign wants, and after the change texts wanting a second vote came first.
        votes_now = [s for s in api.list_samples(HANDLE) if s.text in POOL]
        for sub in ANNOTATORS:
            mine = {s.text: s.quality for s in votes_now if s.annotator == email(sub)}
            assert len(given[sub]) == len(set(given[sub])) == BEFORE + AFTER, (sub, given[sub])
            assert mine == {t: float(polite(t)) for t in given[sub]}, sub
        per_text = Counter(s.text for s in votes_now)
        assert max(per_text.values()) <= 2
        after = {t for sub in ANNOTATORS for t in given[sub][BEFORE:]}
        assert any(per_text[t] == 2 for t in after)
        pending = list(api.list_review(HANDLE))
        assert sorted(p.text for p in pending) == sorted(s.text for s in votes_now)

        # The owner reviews: accepts the first label, rejects one of bob's with a comment, accepts four.
        owner.page.reload()
        owner.drawn(0)
        owner.page.get_by_role("heading", name="Review").wait_for()
        owner.expect_text(f"{len(pending)} label(s) wait for review")
        _pick(owner, [1])
        owner.click("Accept picked")
        owner.expect_text("1 label(s): accepted.")
        queue = list(api.list_review(HANDLE))
        bobs = next(i for i, p in enumerate(queue) if p.annotator == email("bob"))
        _pick(owner, [bobs + 1])
        box = owner.page.get_by_label("Comment (the author reads it)")
        box.click()
        box.press_sequentially(COMMENT, delay=person.uniform(20, 60))
        box.press("Tab")
        owner.settle()
        owner.click("Reject picked")
        owner.expect_text("1 label(s): rejected.")
        # Nothing of that decision stays picked, nor its comment, for the next one.
        expect(owner.page.get_by_label("Comment (the author reads it)")).to_have_value("")
        expect(owner.page.get_by_role("button", name=re.compile(r"^Remove \d+\. "))).to_have_count(0)
        _pick(owner, [1, 2, 3, 4])
        owner.click("Accept picked")
        # The picks and the press reach the app together (one form): all four are decided, at once.
        owner.expect_text("4 label(s): accepted.")
        owner.no_exception()

        rejected = list(api.list_review(HANDLE, "rejected"))
        assert [(r.annotator, r.text, r.comment) for r in rejected] == [
            (email("bob"), queue[bobs].text, COMMENT)
        ]
        assert len(list(api.list_review(HANDLE))) == len(pending) - 2 - 4
        # The acceptance rate per person, as the API has it.
        figures = api.review_page(HANDLE, "pending").people
        table = {row["person"]: row for row in table_rows(owner.page, "acceptance")}
        assert set(table) == {p.annotator for p in figures}
        for p in figures:
            row = table[p.annotator or ""]
            rate = f"{p.acceptance_rate:.0%}" if p.acceptance_rate is not None else ""
            assert (row["accepted"], row["rejected"], row["pending"], row["acceptance"]) == (
                str(p.accepted),
                str(p.rejected),
                str(p.pending),
                rate,
            ), p.annotator
        assert next(p for p in figures if p.annotator == email("bob")).rejected == 1

        # The training takes accepted labels only: neither pending nor rejected ones.
        api.wait(HANDLE, api.train(HANDLE, "low").run_id, timeout=300)
        accepted = list(api.list_review(HANDLE, "accepted"))
        version = api.get_version(HANDLE, 1)
        assert version.sample_count == len(accepted)
        assert version.trait_metrics[trait.key]["texts"] == len(
            {a.text for a in accepted if a.trait == trait.key}
        )
        assert queue[bobs].text not in {a.text for a in accepted if a.annotator == email("bob")}

    finally:
        api.close()
        for context in contexts:
            context.close()


# -- two reviewers settle at once; a wrongly settled text becomes gold, and the owner removes it ------------

GOLDEN = "local.gold-replies"  # a model of its own: 300 replies, each rated by two raters of a file
SPLIT_EVERY = 25  # the second rater disagrees on every 25th reply: 12 texts to settle


def _joined(text: str) -> re.Pattern[str]:
    """`text` as the page shows it: an address in it has a word joiner before its `@` (app/ui/inert.py)."""
    return re.compile(re.escape(text).replace("@", "\u2060?@"))


def _gold_rows(ui: Ui) -> Locator:
    """The rows of the Team page's gold list, as the grid's accessible mirror has them."""
    table = ui.page.locator("[data-testid='stDataFrame'] table[role='grid']").filter(
        has=ui.page.locator("thead th", has_text=re.compile(r"^\s*origin\s*$"))
    )
    return table.locator("tbody tr")


def _card(ui: Ui, text: str) -> Locator:
    """The Disagreements tab's card of `text`."""
    return ui.page.locator("[class*='st-key-disagree_card_']").filter(has_text=text)


def test_two_reviewers_settle_at_once_and_a_wrongly_settled_gold_item_is_removed(
    review_app: str, review_service: LocalService, browser: Browser, person: random.Random
) -> None:
    """The owner and a reviewer settle the same text at once, well down the list: the one who loses is told in
    that text's card, in view, who settled it; the reviewer then settles another text on the wrong pole. The
    owner promotes the settled texts to gold on the Team page, finds the wrong one in the gold list (its
    known answer against the file's raters) and removes it; the API agrees at each step."""
    api = Client(review_service.url, review_service.api_key)
    contexts: list[BrowserContext] = []
    uis: dict[str, Ui] = {}
    try:
        api.create_model(GOLDEN, description="Support replies, two raters")
        trait = api.add_traits(
            GOLDEN, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
        )[0]

        def rated(i: int, text: str, rater: str) -> float:  # rater-b reads every 25th reply the other way
            return float(polite(text) != (rater == "rater-b" and i % SPLIT_EVERY == 0))

        rows = [
            {"trait": trait.key, "text": t, "quality": rated(i, t, rater), "annotator": rater}
            for i, t in enumerate(POOL)
            for rater in ("rater-a", "rater-b")
        ]
        assert not api.import_samples(GOLDEN, rows, provenance="imported").errors
        disagreed = [d.text for d in api.agreement(GOLDEN, trait.key).traits[trait.key].disagreed]
        assert len(disagreed) == len(POOL[::SPLIT_EVERY])
        raced, wrong = disagreed[5], disagreed[6]  # well down the list: the page is scrolled to them
        for sub in (OWNER, REVIEWER):
            contexts.append(browser.new_context(viewport={"width": 1280, "height": 900}))
            ui = uis[sub] = Ui(contexts[-1].new_page())
            ui.goto(review_app)
            sign_in(ui, sub, NAMES[sub])
            open_model(ui, GOLDEN)
            ui.nav("Samples")
            ui.tab("Disagreements")
            _card(ui, raced).wait_for()
        owner, rhea = uis[OWNER], uis[REVIEWER]

        # Both read the same text and settle it; the owner's press arrives first.
        right = trait.positive_label if polite(raced) else trait.negative_label
        for ui in (owner, rhea):
            _card(ui, raced).scroll_into_view_if_needed()
            pause(ui.page, person.uniform(400, 1500))  # reading the votes
        owner.press(_card(owner, raced).get_by_role("button", name=f"Settle: {right}"))
        owner.settle()
        expect(_card(owner, raced).get_by_text(f"Settled as “{right}”")).to_be_in_viewport()
        # Its card offers no Settle button once the run that settled it has ended, not at a later one.
        assert _card(owner, raced).get_by_role("button", name=re.compile("^Settle: ")).count() == 0
        rhea.press(_card(rhea, raced).get_by_role("button", name=f"Settle: {right}"))
        rhea.settle()
        lost = _card(rhea, raced).get_by_text("Not settled: ")
        expect(lost).to_contain_text(_joined(f"settled already, by {email(OWNER)}"))
        expect(lost).to_be_in_viewport()  # beside where she pressed, not at the top of the page
        expect(_card(rhea, raced).get_by_text(_joined(f"Settled by {email(OWNER)}."))).to_be_visible()
        expect(_card(rhea, raced).get_by_role("button")).to_have_count(0)
        rhea.no_exception()

        # She settles the next text, on the wrong pole (a slip of the mouse).
        slip = trait.negative_label if polite(wrong) else trait.positive_label
        _card(rhea, wrong).scroll_into_view_if_needed()
        pause(rhea.page, person.uniform(400, 1500))
        rhea.press(_card(rhea, wrong).get_by_role("button", name=f"Settle: {slip}"))
        rhea.settle()
        expect(_card(rhea, wrong).get_by_text(f"Settled as “{slip}”")).to_be_in_viewport()
        settled = {s.text: (s.quality, s.annotator) for s in api.list_samples(GOLDEN) if s.adjudicated}
        assert settled == {
            raced: (float(polite(raced)), email(OWNER)),
            wrong: (float(not polite(wrong)), email(REVIEWER)),
        }

        # The owner makes the settled texts gold, typing the count.
        owner.nav("Team")
        form = owner.page.locator("[data-testid='stForm']").filter(
            has=owner.page.get_by_role("button", name="Promote settled texts to gold")
        )
        count = form.get_by_label("Settled texts to make gold", exact=True)
        count.click()
        count.press("Control+a")
        count.press_sequentially("2", delay=person.uniform(80, 250))
        pause(owner.page, person.uniform(200, 600))
        owner.click("Promote settled texts to gold")
        owner.expect_text("2 settled text(s) are gold now (2 in all).")
        gold = {g.text: g for g in api.gold(GOLDEN).items}
        assert {t: (g.quality, g.origin) for t, g in gold.items()} == {
            raced: (float(polite(raced)), "promoted"),
            wrong: (float(not polite(wrong)), "promoted"),
        }
        # The list shows each item's text, known answer and origin, as the API has them.
        listed = {row["text"]: row for row in table_rows(owner.page, "origin")}
        assert set(listed) == {raced, wrong}
        for text, g in gold.items():
            answer = trait.positive_label if g.quality == 1.0 else trait.negative_label
            assert (listed[text]["id"], listed[text]["answer"], listed[text]["origin"]) == (
                str(g.id),
                f"{answer} ({g.quality:.2f})",
                "promoted",
            ), text
        owner.no_exception()

        # The wrong one goes: found by typing a few words of it, then removed.
        box = owner.page.get_by_role("combobox", name="Gold item to remove")
        box.click()
        box.press_sequentially(wrong[:24], delay=person.uniform(40, 120))
        pause(owner.page, person.uniform(200, 600))
        owner.page.get_by_role("option", name=f"#{gold[wrong].id} · {wrong[:60]}", exact=False).click()
        owner.click("Remove from gold")
        removed = owner.page.get_by_text(f"Gold item #{gold[wrong].id} removed with its 0 answer(s)")
        expect(removed).to_be_in_viewport()  # under the button pressed
        assert [g.text for g in api.gold(GOLDEN).items] == [raced]
        expect(_gold_rows(owner)).to_have_count(1)  # the list is drawn anew without it
        assert [row["text"] for row in table_rows(owner.page, "origin")] == [raced]
        expect(box).to_have_value("")  # nothing of the removed item stays picked
        owner.no_exception()
    finally:
        api.close()
        for context in contexts:
            context.close()
