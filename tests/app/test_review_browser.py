"""A reviewed team campaign in headless Chromium, people signed in through the team's identity provider
(tests/support/idp.py): three annotators label a draft of realistic size (the support-replies demo's 240
samples and a pool of 300 texts) on one workbench, each in a browser of their own; its owner, in a fourth,
changes the campaign on the Team page while they label (votes wanted, overlap, blind labelling), then reviews
their labels on the Team page: accepts one, rejects one with a comment, accepts several at once. The rejected
label's author reads the comment; the acceptance rate per person is the API's; the training takes accepted
labels only. Last, the Training page's contested texts lead to the Samples page, where the owner settles one.
Then two reviewers settle the same text at once (the loser told in that text's card), and a text settled on
the wrong pole, promoted to gold, is found in the Team page's gold list and removed.

What each page shows is checked against the API. Screenshots: artifacts/screenshots/review_*."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core.client import Client
from core.contract import pole_of
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


def _polite(text: str) -> bool:
    return text.startswith(("Thank", "Sorry")) or text.endswith(("lovely day.", "help further."))


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


def _shown(page: Page) -> Locator:
    return page.locator("[data-testid='label-text']").first


def _errors(page: Page) -> list[str]:
    return page.locator("[data-testid='stAlertContentError'], [data-testid='stException']").all_inner_texts()


def _grid(page: Page, column: str) -> list[dict[str, str]]:
    """The rows of the first table on the page with a `column` header, as the grid's accessible mirror has
    them (a Streamlit dataframe draws on a canvas)."""
    header_cells = page.locator("[data-testid='stDataFrame'] table[role='grid'] thead th")
    header_cells.filter(has_text=re.compile(rf"^\s*{column}\s*$")).first.wait_for(state="attached")
    for table in page.locator("[data-testid='stDataFrame'] table[role='grid']").all():
        header = [c.strip() for c in table.locator("thead th").all_inner_texts()]
        if column in header:
            return [
                dict(zip(header, (c.strip() for c in row.locator("td").all_inner_texts()), strict=False))
                for row in table.locator("tbody tr").all()
            ]
    raise AssertionError(f"no table with a {column!r} column")


def _label_round(uis: dict[str, Ui], person: random.Random, done: int, given: dict[str, list[str]]) -> None:
    """Each annotator, in a random order, reads the text shown and presses the key for it; then each page
    has counted the label and shows the next text."""
    order = list(ANNOTATORS)
    person.shuffle(order)
    for sub in order:
        page = uis[sub].page
        text = _shown(page).inner_text()
        pause(page, person.uniform(80, 500))  # reading it
        page.keyboard.press("2" if _polite(text) else "1")
        given[sub].append(text)
    for sub in order:
        ui = uis[sub]
        expect(label_counter(ui.page)).to_contain_text(f"{done} labelled this session")
        ui.settle()
        assert _errors(ui.page) == [], (sub, done)


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
            _shown(ui.page).wait_for()
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
        owner.shot("review_campaign_form")
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
        uis["carol"].shot("review_label_carol")

        # Every press stored once, as its person's, pending; no text labelled twice by one person, none more
        # often than the campaign wants, and after the change texts wanting a second vote came first.
        votes_now = [s for s in api.list_samples(HANDLE) if s.text in POOL]
        for sub in ANNOTATORS:
            mine = {s.text: s.quality for s in votes_now if s.annotator == email(sub)}
            assert len(given[sub]) == len(set(given[sub])) == BEFORE + AFTER, (sub, given[sub])
            assert mine == {t: float(_polite(t)) for t in given[sub]}, sub
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
        owner.shot("review_queue_owner")

        rejected = list(api.list_review(HANDLE, "rejected"))
        assert [(r.annotator, r.text, r.comment) for r in rejected] == [
            (email("bob"), queue[bobs].text, COMMENT)
        ]
        assert len(list(api.list_review(HANDLE))) == len(pending) - 2 - 4
        # The acceptance rate per person, as the API has it.
        figures = api.review_page(HANDLE, "pending").people
        table = {row["person"]: row for row in _grid(owner.page, "acceptance")}
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

        # bob reads why his label was rejected, on the Team page.
        bob = uis["bob"]
        bob.nav("Team")
        bob.page.get_by_role("heading", name="Review").wait_for()
        bob.expect_text("Your labels a reviewer rejected")
        assert [(r["text"], r["comment"]) for r in _grid(bob.page, "comment")] == [
            (queue[bobs].text, COMMENT)
        ]
        assert not bob.page.get_by_role("button", name="Accept picked").count()
        bob.no_exception()
        bob.shot("review_rejected_bob")

        # The training takes accepted labels only: neither pending nor rejected ones.
        api.wait(HANDLE, api.train(HANDLE, "low").run_id, timeout=300)
        accepted = list(api.list_review(HANDLE, "accepted"))
        version = api.get_version(HANDLE, 1)
        assert version.sample_count == len(accepted)
        assert version.trait_metrics[trait.key]["texts"] == len(
            {a.text for a in accepted if a.trait == trait.key}
        )
        assert queue[bobs].text not in {a.text for a in accepted if a.annotator == email("bob")}

        # The Training page counts the contested texts, and its button leads to where they are settled.
        contested = version.trait_metrics[trait.key]["contested"]
        assert contested >= 1  # the file's contradiction at least
        owner.nav("Training")
        owner.expect_text(f"{contested} contested text(s)")
        owner.click("Settle the contested texts")
        owner.page.get_by_role("heading", name="Samples").first.wait_for()
        expect(owner.page.get_by_role("tab", name="Disagreements", exact=True)).to_have_attribute(
            "aria-selected", "true"
        )
        owner.expect_text(TWICE)
        first = api.agreement(HANDLE, trait.key).traits[trait.key].disagreed[0].text
        pause(owner.page, person.uniform(400, 1500))  # reading the votes
        owner.page.get_by_role("button", name=f"Settle: {trait.positive_label}").first.click()
        owner.settle()
        owner.expect_text(f"Settled as “{trait.positive_label}”")
        owner.expect_text(first)  # the settled text stays where it was settled, saying who settled it
        owner.expect_text(f"Settled by {email(OWNER)}.")
        owner.no_exception()
        owner.shot("review_settled")
        settled = [s for s in api.list_samples(HANDLE) if s.adjudicated]
        assert [(s.text, s.quality, s.annotator) for s in settled] == [(first, 1.0, email(OWNER))]
    finally:
        api.close()
        for context in contexts:
            context.close()


# -- a scaled campaign: assignments, gold and metadata, three people labelling with keys 1..5 ------------

SCALED = "local.scaled-replies"  # a model of its own: the reviewed campaign above is left as it was
POINTS = 5
# Each person's assignment, made on the Team page by search and count: their queue serves it first.
ASSIGNED = {"alice": "refund was sent", "bob": "parcel left", "carol": "invoice is attached"}
PER_PERSON = 4
# Gold items: the pool's coupon replies (none of them matches an assignment's search), their known answer
# the pole a careful reader gives; 10 % of each queue.
GOLD = {t: float(_polite(t)) for t in POOL if "coupon expired" in t}
GOLD_RATE = 0.1
LABELS_EACH = 10  # texts each person labels at least (more while no gold item has come up yet)
MAX_ROUNDS = 30  # 90 texts: no gold among them has probability 0.9^90 < 10^-4
# Metadata imported with the pool: a person reads it beside the text.
METADATA = {
    t: {"channel": ("email", "chat", "phone")[i % 3], "ticket": f"T-{1000 + i}"} for i, t in enumerate(POOL)
}


def _open_model(ui: Ui, handle: str) -> None:
    """Pick `handle` in the sidebar, as a person does (another model was open)."""
    box = ui.page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Model")
    box.click()
    ui.page.get_by_role("option", name=handle, exact=True).click()
    ui.settle()
    expect(box).to_have_value(handle)


def _metadata_shown(page: Page) -> dict[str, str]:
    """The metadata line beside the text shown, as {key: value}."""
    line = page.locator("[data-testid='stCaptionContainer']").filter(has_text="ticket:").first.inner_text()
    return dict(pair.split(": ", 1) for pair in line.strip().split(" · "))


def _counted(page: Page, n: int) -> None:
    expect(label_counter(page)).to_contain_text(re.compile(rf"(?<![\d,]){n} labelled this session"))


def _click_until(ui: Ui, button: Locator, said: str, done: Callable[[], bool]) -> None:
    """Click `button` until the page says `said`: a person clicks again when a click changed nothing, here
    when the API shows no change either (a click can be lost; never acted on twice: `done` says it acted)."""
    for _ in range(3):
        button.click()
        ui.settle()
        try:
            ui.page.get_by_text(said).first.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            assert not done(), f"{said!r} not said, though the API shows it done"
            print(f"a click on {button} changed nothing: clicked again")
    raise AssertionError(f"{said!r} not said after three clicks")


def _assign(owner: Ui, sub: str, search: str, person: random.Random, channel: str | None = None) -> None:
    """The owner assigns `PER_PERSON` texts containing `search` (and whose metadata `channel` is `channel`) to
    `sub` with the Team page's form."""
    form = owner.page.locator("[data-testid='stForm']").filter(
        has=owner.page.get_by_role("button", name="Assign", exact=True)
    )
    typed = [("Person", email(sub)), ("Texts containing", search)]
    if channel is not None:
        form.get_by_role("combobox", name="With metadata").click()
        owner.page.get_by_role("option", name="channel", exact=True).click()
        typed.append(("Equal to", channel))
    for label, value in typed:
        box = form.get_by_label(label, exact=True)
        box.click()
        box.press_sequentially(value, delay=person.uniform(30, 90))
        pause(owner.page, person.uniform(150, 500))
    form.get_by_label("How many", exact=True).fill(str(PER_PERSON))
    owner.click("Assign")
    owner.expect_text(
        f"{PER_PERSON} texts assigned to {email(sub)} (0 they had already); {PER_PERSON} in all."
    )


def test_three_label_a_scaled_model_with_assignments_gold_and_metadata(
    review_app: str, review_service: LocalService, browser: Browser, person: random.Random
) -> None:
    api = Client(review_service.url, review_service.api_key)
    contexts: list[BrowserContext] = []
    uis: dict[str, Ui] = {}
    try:
        api.create_model(SCALED, description="Support replies rated for politeness on a scale")
        trait = api.add_traits(
            SCALED, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
        )[0]
        api.import_pool(SCALED, POOL, metadata=[METADATA[t] for t in POOL])
        added = api.add_gold(SCALED, [{"trait": trait.key, "text": t, "quality": q} for t, q in GOLD.items()])
        assert (added.added, added.total) == (len(GOLD), len(GOLD))
        api.update_model(SCALED, gold_rate=GOLD_RATE)
        for sub in (OWNER, *ANNOTATORS):
            contexts.append(browser.new_context(viewport={"width": 1280, "height": 1000}))
            ui = uis[sub] = Ui(contexts[-1].new_page())
            ui.goto(review_app)
            sign_in(ui, sub, NAMES[sub])
            _open_model(ui, SCALED)

        # The owner rates the trait on 5 points (Traits page), then assigns each person texts (Team page).
        owner = uis[OWNER]
        owner.nav("Traits")
        owner.tab("Scale")
        owner.page.get_by_role("combobox", name="People label it with").click()
        owner.page.get_by_role("option", name=f"{POINTS}-point scale", exact=True).click()
        owner.settle()
        expect(owner.page.get_by_label(f"Point {POINTS}", exact=True)).to_have_value("polite")
        owner.click("Save how it is labelled")
        owner.expect_text(f"Politeness: labelled with {POINTS}-point scale.")
        owner.shot("scaled_traits_owner")
        scale = api.list_traits(SCALED)[0].scale
        assert scale is not None and scale.points == POINTS
        owner.nav("Team")
        # carol's texts by a phrase and a metadata value: a channel that has enough of her texts.
        carols = [METADATA[t]["channel"] for t in POOL if ASSIGNED["carol"] in t and t not in GOLD]
        channel = next(c for c in ("phone", "chat", "email") if carols.count(c) >= PER_PERSON)
        for sub, search in ASSIGNED.items():
            _assign(owner, sub, search, person, channel if sub == "carol" else None)
        owner.no_exception()
        owner.shot("scaled_assigned_owner")
        assert {p.annotator: (p.assigned, p.labelled) for p in api.assignments(SCALED).people} == {
            email(sub): (PER_PERSON, 0) for sub in ASSIGNED
        }

        for sub in ANNOTATORS:
            ui = uis[sub]
            ui.nav("Label")
            _shown(ui.page).wait_for()
            ui.keys_to_the_page()
        # Keys 1..5 with the scale's words; a middle point the owner left unnamed is its number alone.
        point_buttons = uis["alice"].page.get_by_role("button", name=re.compile(r"^[1-5]( · \w+)?$"))
        expect(point_buttons).to_have_text(["1 · rude", "2", "3", "4", "5 · polite"])
        # Each person's keys, seeded from the run's seed: a press is a point 1..5.
        keys = {sub: random.Random(person.random()) for sub in ANNOTATORS}
        given: dict[str, list[tuple[str, int]]] = {sub: [] for sub in ANNOTATORS}

        def counted(sub: str) -> int:  # every text labelled, gold or not (the count gives no gold away)
            return len(given[sub])

        rounds = 0
        while rounds < LABELS_EACH or not any(t in GOLD for g in given.values() for t, _ in g):
            assert rounds < MAX_ROUNDS, "no gold item came up"
            rounds += 1
            order = list(ANNOTATORS)
            person.shuffle(order)
            was: dict[str, str | None] = {}
            for sub in order:
                page = uis[sub].page
                shown = _shown(page)
                was[sub] = shown.get_attribute("data-shown")
                text = shown.inner_text()
                assert _metadata_shown(page) == METADATA[text], (sub, text)  # gold too: it looks the same
                pause(page, person.uniform(80, 500))  # reading it and its metadata
                key = keys[sub].randint(1, POINTS)
                page.keyboard.press(str(key))
                given[sub].append((text, key))
            for sub in order:
                ui = uis[sub]
                expect(_shown(ui.page)).not_to_have_attribute("data-shown", was[sub] or "")
                ui.settle()
                _counted(ui.page, counted(sub))
                assert _errors(ui.page) == [], (sub, rounds)
            if rounds == LABELS_EACH // 2:  # bob looks at his progress on the Team page and comes back
                bob = uis["bob"]
                bob.nav("Team")
                bob.page.get_by_role("heading", name="Assigned work").wait_for()
                pause(bob.page, person.uniform(300, 1200))
                bob.nav("Label")
                _shown(bob.page).wait_for()
                _counted(bob.page, counted("bob"))  # the same session goes on
                bob.keys_to_the_page()
        uis["bob"].shot("scaled_label_bob")

        # Assigned texts came first: each person's first labels that were not gold are their assignment.
        for sub, search in ASSIGNED.items():
            first = [t for t, _ in given[sub] if t not in GOLD][:PER_PERSON]
            assert all(search in t for t in first), (sub, first)
        carols_first = [t for t, _ in given["carol"] if t not in GOLD][:PER_PERSON]  # by the metadata filter
        assert {METADATA[t]["channel"] for t in carols_first} == {channel}, carols_first
        assert {
            p.annotator: (p.assigned, p.labelled, p.remaining) for p in api.assignments(SCALED).people
        } == {email(sub): (PER_PERSON, PER_PERSON, 0) for sub in ASSIGNED}

        # alice, in "My labels", gives her second-newest label another point and withdraws the third.
        alice = uis["alice"]
        mine = [(t, k) for t, k in reversed(given["alice"]) if t not in GOLD]
        (changed, changed_key), (gone, _) = mine[1], mine[2]
        alice.page.locator("summary").filter(has_text="My labels").first.click()
        # Her gold answers count as the session's count does (never listed: no answer is a label to change).
        alice.expect_text(f"{len(given['alice'])} label(s), newest first.")
        rows = alice.page.locator("[data-testid='stHorizontalBlock']")
        pause(alice.page, person.uniform(300, 1000))
        point = person.choice([k for k in range(1, POINTS + 1) if k != changed_key])
        to = (point - 1) / (POINTS - 1)

        def alices() -> dict[str, float]:
            return {s.text: s.quality for s in api.list_samples(SCALED) if s.annotator == email("alice")}

        change = rows.filter(has_text=changed).first.get_by_role("button", name=str(point), exact=True)
        _click_until(alice, change, "Changed your label #", lambda: alices()[changed] == to)
        pause(alice.page, person.uniform(300, 1000))
        withdraw = rows.filter(has_text=gone).first.get_by_role("button", name="Withdraw")
        _click_until(alice, withdraw, "Withdrew your label #", lambda: gone not in alices())
        alice.no_exception()
        alice.shot("scaled_my_labels_alice")
        _counted(alice.page, len(given["alice"]) - 1)
        alice.page.reload()  # the session's count survives a reload (its start is in the address)
        alice.drawn(0)
        _shown(alice.page).wait_for()
        _counted(alice.page, len(given["alice"]) - 1)

        # Every stored vote is its key's point, per person; alice's change and withdrawal included.
        for sub in ANNOTATORS:
            pressed = [(t, k) for t, k in given[sub] if t not in GOLD]
            assert len({t for t, _ in given[sub]}) == len(given[sub]), sub  # no text served twice
            want = {t: (k, (k - 1) / (POINTS - 1)) for t, k in pressed}
            if sub == "alice":
                want[changed] = (point, to)
                del want[gone]
            stored = {
                s.text: (s.point, s.quality) for s in api.list_samples(SCALED) if s.annotator == email(sub)
            }
            assert stored == want, sub

        # Gold answers were recorded, at about the rate, and each is right when on the known answer's pole.
        accuracy = api.gold_accuracy(SCALED)
        answered = {p.annotator: (p.answered, p.correct) for p in accuracy.people}
        for sub in ANNOTATORS:
            golds = [(t, k) for t, k in given[sub] if t in GOLD]
            right = sum(pole_of((k - 1) / (POINTS - 1)) == pole_of(GOLD[t]) for t, k in golds)
            assert answered.get(email(sub), (0, 0)) == (len(golds), right), sub
        total = sum(len(g) for g in given.values())
        gold_total = sum(a for a, _ in answered.values())
        # At 10 %, more than a third of the texts gold has probability < 10^-4 (binomial tail).
        assert 1 <= gold_total <= total / 3, (gold_total, total)

        # The owner's Team page: progress against the assignment and accuracy on gold, the API's figures.
        owner.page.reload()
        owner.drawn(0)
        owner.page.get_by_role("heading", name="Assigned work").wait_for()
        work = {row["person"]: row for row in _grid(owner.page, "remaining")}
        people = api.assignments(SCALED).people
        assert set(work) == {w.annotator for w in people}
        for w in people:
            row = work[w.annotator]
            assert (row["assigned"], row["labelled"], row["remaining"], row["labelled in all"]) == (
                str(w.assigned),
                str(w.labelled),
                str(w.remaining),
                str(w.labelled_total),
            ), w.annotator
        table = {row["person"]: row for row in _grid(owner.page, "gold answered")}
        assert set(table) == {p.annotator for p in accuracy.people}
        for p in accuracy.people:
            row = table[p.annotator]
            assert (row["gold answered"], row["correct"], row["95% interval"]) == (
                str(p.answered),
                str(p.correct),
                f"{p.low:.0%} – {p.high:.0%}",
            ), p.annotator
        owner.no_exception()
        owner.shot("scaled_team_owner")
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
            return float(_polite(text) != (rater == "rater-b" and i % SPLIT_EVERY == 0))

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
            _open_model(ui, GOLDEN)
            ui.nav("Samples")
            ui.tab("Disagreements")
            _card(ui, raced).wait_for()
        owner, rhea = uis[OWNER], uis[REVIEWER]

        # Both read the same text and settle it; the owner's press arrives first.
        right = trait.positive_label if _polite(raced) else trait.negative_label
        for ui in (owner, rhea):
            _card(ui, raced).scroll_into_view_if_needed()
            pause(ui.page, person.uniform(400, 1500))  # reading the votes
        _card(owner, raced).get_by_role("button", name=f"Settle: {right}").click()
        owner.settle()
        expect(_card(owner, raced).get_by_text(f"Settled as “{right}”")).to_be_in_viewport()
        _card(rhea, raced).get_by_role("button", name=f"Settle: {right}").click()
        rhea.settle()
        lost = _card(rhea, raced).get_by_text("Not settled: ")
        expect(lost).to_contain_text(_joined(f"settled already, by {email(OWNER)}"))
        expect(lost).to_be_in_viewport()  # beside where she pressed, not at the top of the page
        expect(_card(rhea, raced).get_by_text(_joined(f"Settled by {email(OWNER)}."))).to_be_visible()
        expect(_card(rhea, raced).get_by_role("button")).to_have_count(0)
        rhea.no_exception()
        rhea.screen("gold_race_lost_rhea")

        # She settles the next text, on the wrong pole (a slip of the mouse).
        slip = trait.negative_label if _polite(wrong) else trait.positive_label
        _card(rhea, wrong).scroll_into_view_if_needed()
        pause(rhea.page, person.uniform(400, 1500))
        _card(rhea, wrong).get_by_role("button", name=f"Settle: {slip}").click()
        rhea.settle()
        expect(_card(rhea, wrong).get_by_text(f"Settled as “{slip}”")).to_be_in_viewport()
        settled = {s.text: (s.quality, s.annotator) for s in api.list_samples(GOLDEN) if s.adjudicated}
        assert settled == {
            raced: (float(_polite(raced)), email(OWNER)),
            wrong: (float(not _polite(wrong)), email(REVIEWER)),
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
            raced: (float(_polite(raced)), "promoted"),
            wrong: (float(not _polite(wrong)), "promoted"),
        }
        # The list shows each item's text, known answer and origin, as the API has them.
        listed = {row["text"]: row for row in _grid(owner.page, "origin")}
        assert set(listed) == {raced, wrong}
        for text, g in gold.items():
            answer = trait.positive_label if g.quality == 1.0 else trait.negative_label
            assert (listed[text]["id"], listed[text]["answer"], listed[text]["origin"]) == (
                str(g.id),
                f"{answer} ({g.quality:.2f})",
                "promoted",
            ), text
        owner.no_exception()
        owner.shot("gold_list_owner")

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
        assert [row["text"] for row in _grid(owner.page, "origin")] == [raced]
        expect(box).to_have_value("")  # nothing of the removed item stays picked
        owner.no_exception()
        owner.shot("gold_removed_owner")
    finally:
        api.close()
        for context in contexts:
            context.close()
