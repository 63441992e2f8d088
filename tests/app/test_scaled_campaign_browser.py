"""A scaled campaign in headless Chromium, people signed in through the team's identity provider
(tests/support/idp.py): the owner rates a trait on 5 points (Traits page) and assigns each of three annotators
texts by a phrase and a metadata value (Team page); a tenth of each queue is gold. The three label with the
keys 1..5, each in a browser of their own, reading the metadata beside each text: their assignments come
first, gold looks like any text. The Team page's work and gold tables are the API's."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from core.client import Client
from core.contract import pole_of
from core.local import LocalService
from tests.support.app import BROWSER, PAGE_BOUND_MS, SUPPORT_REPLIES, Ui, pause
from tests.support.idp import Idp
from tests.support.signin import email, label_counter, oidc_service, provider_with, sign_in, team_workbench
from tests.support.team_pages import open_model, page_errors, polite, shown_text, table_rows

pytestmark = BROWSER

ANNOTATORS = {"alice": "Alice Archer", "bob": "Bob Baker", "carol": "Carol Cole"}
OWNER = "olive"
NAMES = {**ANNOTATORS, OWNER: "Olive Owens"}
POOL = SUPPORT_REPLIES  # 300 support replies


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with provider_with(NAMES) as provider:
        yield provider


@pytest.fixture(scope="module")
def team_service(idp: Idp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """The team, added by the operator's key (as `python -m service people` does); no model yet."""
    with oidc_service(idp, tmp_path_factory.mktemp("scaled-service")) as svc:
        with svc.client() as operator:
            for sub in ANNOTATORS:
                operator.set_person_role(svc.namespace, email(sub), "annotator")
            operator.set_person_role(svc.namespace, email(OWNER), "owner")
        yield svc


@pytest.fixture(scope="module")
def team_app(idp: Idp, team_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with team_workbench(idp, team_service, tmp_path_factory.mktemp("scaled-workbench")) as url:
        yield url


SCALED = "local.scaled-replies"
POINTS = 5
# Each person's assignment, made on the Team page by search and count: their queue serves it first.
ASSIGNED = {"alice": "refund was sent", "bob": "parcel left", "carol": "invoice is attached"}
PER_PERSON = 4
# Gold items: the pool's coupon replies (none of them matches an assignment's search), their known answer
# the pole a careful reader gives; 10 % of each queue.
GOLD = {t: float(polite(t)) for t in POOL if "coupon expired" in t}
GOLD_RATE = 0.1
LABELS_EACH = 10  # texts each person labels at least (more while no gold item has come up yet)
MAX_ROUNDS = 30  # 90 texts: no gold among them has probability 0.9^90 < 10^-4
# Metadata imported with the pool: a person reads it beside the text.
METADATA = {
    t: {"channel": ("email", "chat", "phone")[i % 3], "ticket": f"T-{1000 + i}"} for i, t in enumerate(POOL)
}


def _metadata_shown(page: Page) -> dict[str, str]:
    """The metadata line beside the text shown, as {key: value}."""
    line = page.locator("[data-testid='stCaptionContainer']").filter(has_text="ticket:").first.inner_text()
    return dict(pair.split(": ", 1) for pair in line.strip().split(" · "))


def _counted(page: Page, n: int) -> None:
    expect(label_counter(page)).to_contain_text(re.compile(rf"(?<![\d,]){n} labelled this session"))


def _click_once(ui: Ui, button: Locator, said: str, done: Callable[[], bool]) -> None:
    """Click `button` once, as a person does, and wait for the page to say `said` and the API to show it done:
    a click the page dropped fails here, never gets a second press. The page's status line reruns on a timer,
    so `settle` may see one of its runs rather than the click's: the message is the condition, waited for
    as long as any run of a page may take (`PAGE_BOUND_MS`: a busy machine's fragment run can take tens of
    seconds); it stays until the list's next run, which only a press of this person starts."""
    ui.idle()  # the page drawn, as a person's eyes wait for it: no run of it in flight
    ui.press(button)
    ui.settle()
    ui.expect_text(said, timeout=PAGE_BOUND_MS)
    assert done(), f"{said!r} said, though the API does not show it done"


def _row(rows: Locator, text: str) -> Locator:
    """The My labels row of `text` itself: its text, then its label's number (`#12 · …`), so a longer text
    that starts with `text` (the same reply with a closing line) is not taken for it."""
    return rows.filter(has_text=re.compile(re.escape(text) + r"\s*#\d+ · ")).first


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
    team_app: str, team_service: LocalService, browser: Browser, person: random.Random
) -> None:
    api = Client(team_service.url, team_service.api_key)
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
            ui.goto(team_app)
            sign_in(ui, sub, NAMES[sub])
            open_model(ui, SCALED)

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
        scale = api.list_traits(SCALED)[0].scale
        assert scale is not None and scale.points == POINTS
        owner.nav("Team")
        # carol's texts by a phrase and a metadata value: a channel that has enough of her texts.
        carols = [METADATA[t]["channel"] for t in POOL if ASSIGNED["carol"] in t and t not in GOLD]
        channel = next(c for c in ("phone", "chat", "email") if carols.count(c) >= PER_PERSON)
        for sub, search in ASSIGNED.items():
            _assign(owner, sub, search, person, channel if sub == "carol" else None)
        owner.no_exception()
        assert {p.annotator: (p.assigned, p.labelled) for p in api.assignments(SCALED).people} == {
            email(sub): (PER_PERSON, 0) for sub in ASSIGNED
        }

        for sub in ANNOTATORS:
            ui = uis[sub]
            ui.nav("Label")
            shown_text(ui.page).wait_for()
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
                shown = shown_text(page)
                was[sub] = shown.get_attribute("data-shown")
                text = shown.inner_text()
                assert _metadata_shown(page) == METADATA[text], (sub, text)  # gold too: it looks the same
                pause(page, person.uniform(80, 500))  # reading it and its metadata
                key = keys[sub].randint(1, POINTS)
                page.keyboard.press(str(key))
                given[sub].append((text, key))
            for sub in order:
                ui = uis[sub]
                expect(shown_text(ui.page)).not_to_have_attribute("data-shown", was[sub] or "")
                ui.settle()
                _counted(ui.page, counted(sub))
                assert page_errors(ui.page) == [], (sub, rounds)
            if rounds == LABELS_EACH // 2:  # bob looks at his progress on the Team page and comes back
                bob = uis["bob"]
                bob.nav("Team")
                bob.page.get_by_role("heading", name="Assigned work").wait_for()
                pause(bob.page, person.uniform(300, 1200))
                bob.nav("Label")
                shown_text(bob.page).wait_for()
                _counted(bob.page, counted("bob"))  # the same session goes on
                bob.keys_to_the_page()

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

        change = _row(rows, changed).get_by_role("button", name=str(point), exact=True)
        _click_once(alice, change, "Changed your label #", lambda: alices()[changed] == to)
        pause(alice.page, person.uniform(300, 1000))
        withdraw = _row(rows, gone).get_by_role("button", name="Withdraw")
        _click_once(alice, withdraw, "Withdrew your label #", lambda: gone not in alices())
        alice.no_exception()
        alice.shot("scaled_my_labels_alice")
        _counted(alice.page, len(given["alice"]) - 1)
        alice.page.reload()  # the session's count survives a reload (its start is in the address)
        alice.drawn(0)
        shown_text(alice.page).wait_for()
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
        work = {row["person"]: row for row in table_rows(owner.page, "remaining")}
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
        table = {row["person"]: row for row in table_rows(owner.page, "gold answered")}
        assert set(table) == {p.annotator for p in accuracy.people}
        for p in accuracy.people:
            row = table[p.annotator]
            assert (row["gold answered"], row["correct"], row["95% interval"]) == (
                str(p.answered),
                str(p.correct),
                f"{p.low:.0%} – {p.high:.0%}",
            ), p.annotator
        owner.no_exception()
    finally:
        api.close()
        for context in contexts:
            context.close()
