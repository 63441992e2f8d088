"""Test data and helpers shared by the workbench tests."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import re
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from playwright.sync_api import FloatRect, Locator, Page, ViewportSize, expect

from core.client import Client
from core.local import KEY_FILE, LocalService
from harness.browser import CHROMIUM, IDLE
from tests.support.failures import watch

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "pages"


FORMAL = [
    "Dear colleague, I would be grateful if you could kindly review the attached document.",
    "We sincerely appreciate your cooperation and remain at your disposal for further questions.",
    "Please find enclosed the requested report; kindly confirm its receipt at your convenience.",
    "I respectfully request your approval of the proposed budget at your earliest convenience.",
    "Thank you for your correspondence; we shall respond formally within five business days.",
    "Kindly note that the meeting has been rescheduled; we regret any inconvenience caused.",
    "It is with great pleasure that we accept your invitation to the annual conference.",
    "We would appreciate it if you could furnish the documentation by the stated deadline.",
    "Please accept our sincere apologies for the delay in processing your application.",
    "I am writing to formally confirm the terms agreed upon during our recent meeting.",
    "Your request has been duly noted and forwarded to the appropriate department.",
    "We remain grateful for your continued support and look forward to our collaboration.",
]
CASUAL = [
    "hey lol that was so fun, see ya later!!",
    "yo whats up, wanna grab pizza tonight?",
    "omg this is awesome haha, love it",
    "nah im good, gonna chill at home tbh",
    "lol no way dude, thats hilarious",
    "sup guys, cant make it today sorry lol",
    "haha yeah totally, lets do it tmrw",
    "ugh so tired, gonna crash now lol",
    "cool cool, catch ya later dude",
    "wow haha thats wild, no kidding",
    "yep sounds good, hit me up later",
    "lmao thats the best thing ever dude",
]
POSITIVE_WORDS = ["wonderful", "great", "excellent", "fantastic", "lovely", "superb"]
NEGATIVE_WORDS = ["terrible", "awful", "horrible", "dreadful", "poor", "bad"]


def formality_samples() -> list[dict[str, Any]]:
    return [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL] + [
        {"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL
    ]


def sentiment_samples() -> list[dict[str, Any]]:
    rows = []
    for i, (p, n) in enumerate(zip(POSITIVE_WORDS * 2, NEGATIVE_WORDS * 2, strict=True)):
        rows.append({"trait": "sentiment", "text": f"what a {p} day number {i}, truly {p}", "quality": 1.0})
        rows.append({"trait": "sentiment", "text": f"what a {n} day number {i}, truly {n}", "quality": 0.0})
    return rows


FORMALITY = {"name": "Formality", "positive_label": "formal", "negative_label": "casual"}
SENTIMENT = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
_names = itertools.count(1)


def new_handle(service: LocalService, stem: str) -> str:
    return f"{service.namespace}.{stem}-{next(_names)}"


def new_key_name(stem: str) -> str:
    """A key name no other test of this process uses: key names are unique in a service, and the test files
    of one xdist worker share its service."""
    return f"{stem}{next(_names)}"


def make_draft(client: Client, handle: str, traits: tuple[dict[str, Any], ...] = (FORMALITY,)) -> str:
    client.create_model(handle, description="workbench test model")
    client.add_traits(handle, list(traits))
    rows = formality_samples() if FORMALITY in traits else []
    if SENTIMENT in traits:
        rows += sentiment_samples()
    client.import_samples(handle, rows)
    return handle


# -- browser tests (headless Chromium) ------------------------------------------------------------------

# A failing test's pages go to artifacts/screenshots/ (git-ignored), or where SCORING_SCREENSHOTS says. The
# pictures a passing test takes for a person to look at (`Ui.shot`, `Ui.screen`) are taken only when
# SCORING_SCREENSHOTS names a folder: nobody looks at a passing run's, and each cost the page a resize, a
# redraw and an encoded picture.
SHOTS = Path(os.environ.get("SCORING_SCREENSHOTS") or ROOT / "artifacts" / "screenshots")
SHOOTING = bool(os.environ.get("SCORING_SCREENSHOTS"))

# An `expect` waits for a condition the page reaches; its bound (Playwright's default is 5 s) is how long a
# slow machine may take to get there, not how long this one does: a save and the page's rerun beside two busy
# processes took longer than 5 s.
# a projector, a desktop
SCREENS: tuple[ViewportSize, ...] = ({"width": 1280, "height": 800}, {"width": 1920, "height": 1080})
EXPECT_BOUND_MS = 60_000
PAGE_BOUND_MS = 120_000  # a page's run, or a locator's wait on what a run draws (`Ui`)

CALL_FAILED = pytest.StashKey[bool]()  # the test itself failed (conftest's hook): a teardown keeps evidence

# The marks of every browser test module (`pytestmark = BROWSER`).
BROWSER = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"
    ),
]


# Counts the script runs the page starts (fragments too): `data-test-script-state` turns "running" for each;
# the reruns the page asks the server for: a BackMsg whose first field is `rerun_script` (field 11,
# length-delimited: tag byte 0x5a) sent on Streamlit's websocket; and the runs that finished: a ForwardMsg
# (one a websocket message) with `script_finished` (field 6, a varint). FINISHED_SUCCESSFULLY (0) ends a
# whole-page run, a fragment's run ends with 3, a run cut short by a rerun with 2 (its rerun follows).
# A quick run can start and finish within one React render, so the page never shows "running": only the
# finished messages count every run.
_COUNT_RUNS = """
window.__stRuns = 0;
window.__stAsked = 0;
window.__stDrawn = 0;
window.__stFinished = 0;
window.__stCalm = 0;  // __stDrawn's value when the page was last seen with nothing stale
const calm = () => {
  if (!document.querySelector("[data-stale='true']")) window.__stCalm = window.__stDrawn;
};
// Every change is looked at, not a poll: a fragment on a timer, on a slow machine, leaves the page with
// nothing stale only for the moment between one of its runs and the next.
new MutationObserver(calm).observe(document, {
  childList: true, attributes: true, subtree: true, attributeFilter: ["data-stale", "data-test-script-state"],
});
new MutationObserver((changes) => {
  for (const c of changes) {
    if (c.target.getAttribute("data-test-script-state") === "running") window.__stRuns += 1;
  }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ["data-test-script-state"]});
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
    : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
  if (bytes && bytes.length && bytes[0] === 0x5a) window.__stAsked += 1;
  return send.call(this, data);
};
const scriptFinished = (b) => {  // a ForwardMsg's field 6, or null
  let i = 0;
  const varint = () => {
    let value = 0, shift = 0, byte;
    do {
      byte = b[i++]; value += (byte & 0x7f) * 2 ** shift; shift += 7;
    } while (byte & 0x80 && i < b.length);
    return value;
  };
  while (i < b.length) {
    const key = varint(), wire = key % 8;
    if (wire === 0) { const value = varint(); if (key === 48) return value; }
    else if (wire === 2) { const length = varint(); i += length; }  // not `i += varint()`: i read first
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else return null;
  }
  return null;
};
window.__stClosed = 0;  // Streamlit's websocket closing: the page sends nothing until it reconnects
const Socket = window.WebSocket;
window.WebSocket = class extends Socket {
  constructor(...args) {
    super(...args);
    this.addEventListener("close", () => { window.__stClosed += 1; });
    this.addEventListener("message", (event) => {
      const status = event.data instanceof ArrayBuffer ? scriptFinished(new Uint8Array(event.data)) : null;
      if (status !== null && status !== 2) window.__stFinished += 1;
      if (status === 0) {
        window.__stDrawn += 1;
        requestAnimationFrame(calm);
      }
    });
  }
};
// The page's repeating timers (a `run_every` fragment's among them), so a test can fire them on cue.
window.__stTimers = [];
const every = window.setInterval;
window.setInterval = function (fn, ms, ...rest) {
  window.__stTimers.push({fn, ms});
  return every.call(window, fn, ms, ...rest);
};
"""
# An action that asked for no rerun yet (a text box sends its value on blur or Enter, a slider on release):
# how long its rerun may take to be asked for. A rerun asked for is waited for as a condition.
RUN_STARTS_MS = 2_000
# How long a button's click may take to leave as a rerun request: the browser sends it at its next flush.
PRESS_SENDS_MS = 10_000
# How often the waits below look at the page's counters: an interval, not Playwright's default of every
# animation frame, which keeps a software-rendered page producing frames at 60 Hz for the whole wait (the
# counters only grow, so no change is missed between two looks).
POLL_MS = 50


def pause(page: Page, ms: float) -> None:
    """A person's pause between keys or actions (reading, thinking): part of the act, never a wait for the
    app; those are conditions (`Ui.settle`, locators, `expect`)."""
    page.wait_for_timeout(ms)


def where_drawn(locator: Locator) -> FloatRect:
    """Where an element is drawn (it must be visible: Playwright says None for one that is not)."""
    rect = locator.bounding_box()
    assert rect is not None, f"{locator} is not drawn"
    return rect


def painted(page: Page) -> None:
    """Wait until the browser has drawn what changed (two animation frames), e.g. before a screenshot."""
    page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
                           ".then(() => true)")  # fmt: skip


# Where `app/ui/inert.py` puts an invisible word joiner (an autolink's start: `@`, `://`, `www.`), in a regex.
_JOINED_AT = re.compile(r"(?=@)|(?<=:)(?=/)|(?<=[wW]{3})(?=\\\.)")


def _as_shown(text: str) -> str | re.Pattern[str]:
    """`text` to find on a page: user text in it (an e-mail, an address) may carry those word joiners."""
    if not any(mark in text for mark in ("@", "://", "www.")):
        return text
    return re.compile(_JOINED_AT.sub("\u2060?", re.escape(text)).replace("\\ ", " "), re.IGNORECASE)


class Ui:
    """A Streamlit page in Chromium, with waits that follow the script runner."""

    def __init__(self, page: Page) -> None:
        self.page = page
        # A locator's own waits (`wait_for`, `click`) bounded as the waits below, not by Playwright's 30 s:
        # the demo's examples took longer to show beside a machine's other work.
        page.set_default_timeout(PAGE_BOUND_MS)
        page.add_init_script(_COUNT_RUNS)
        # The page's counters when the app was last seen idle: runs started, runs finished, reruns asked for
        self._seen_runs = self._seen_finished = self._asked_seen = 0
        watch(self)  # captured if the test fails (tests/support/failures.py)

    def _counts(self) -> tuple[int, int, int]:
        """Runs seen starting, runs finished, reruns asked for (the page's counters above)."""
        runs, finished, asked = self.page.evaluate(
            "[window.__stRuns || 0, window.__stFinished || 0, window.__stAsked || 0]"
        )
        return int(runs), int(finished), int(asked)

    def _saw_idle(self) -> None:
        self._seen_runs, self._seen_finished, self._asked_seen = self._counts()

    def _asked_since_idle(self) -> bool:
        return self._counts()[2] > self._asked_seen

    def settle(self, timeout: float = 120_000) -> None:
        """Wait for the rerun an action started to finish: first for a run since the last wait (one the page
        has asked the server for, however long the server takes to start it; else a rerun the action asks
        for within `RUN_STARTS_MS`), then for the app to be idle. A rerun asked for that never comes fails."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browser tests only

        asked = self._asked_since_idle()
        try:
            self.page.wait_for_function(
                "([runs, ended]) => (window.__stRuns || 0) > runs || (window.__stFinished || 0) > ended",
                arg=[self._seen_runs, self._seen_finished],
                timeout=timeout if asked else RUN_STARTS_MS,
                polling=POLL_MS,
            )
        except PlaywrightTimeout:
            if asked:
                raise
        self.idle(timeout)

    def idle(self, timeout: float = 120_000) -> None:
        """Wait until no script runs and nothing on the page is stale (a run draws the new elements beside
        the old, marked `data-stale`, and removes those when it ends: two pagers, two grids meanwhile)."""
        self.page.wait_for_selector(IDLE, timeout=timeout)
        expect(self.page.locator("[data-stale='true']")).to_have_count(0, timeout=timeout)
        self._saw_idle()

    def drawn(self, runs_before: int, timeout: float = 120_000) -> None:
        """Wait until a whole-page run has finished since `runs_before` (`__stDrawn` then) and the page has
        since been seen with nothing stale: the page is drawn. Not `idle`: a fragment that reruns on a timer
        keeps a loaded page running, its next run asked for before the last one ends, and the app is then
        never seen idle."""
        self.page.wait_for_function(
            "(n) => window.__stDrawn > n && window.__stCalm === window.__stDrawn",
            arg=runs_before,
            timeout=timeout,
            polling=POLL_MS,
        )
        self._saw_idle()

    def _drawn_count(self) -> int:
        return int(self.page.evaluate("window.__stDrawn || 0"))

    def goto(self, url: str) -> None:
        self.page.goto(url)
        self.drawn(0, timeout=300_000)  # the first load starts the service and loads the demo models

    def nav(self, title: str, heading: str | None = None) -> None:
        """Open the sidebar's page `title` and wait for its `heading` (the title, unless the page heads
        itself otherwise: the Demo page with the model's description)."""
        expand = self.page.locator("[data-testid='stExpandSidebarButton']")
        if expand.count() and expand.first.is_visible():  # the Demo page starts with the sidebar collapsed
            expand.first.click()
        link = self.page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True)
        link.wait_for(state="visible")  # the sidebar has opened
        before = self._drawn_count()
        link.click()
        self.drawn(before)
        self.page.get_by_role("heading", name=heading or title).first.wait_for()

    def tab(self, name: str) -> None:
        """Open a tab; tabs that track the user's tab (the Samples page's) ask for a rerun: wait for it, as a
        file picked meanwhile would go to an uploader that is drawn anew."""
        self.page.get_by_role("tab", name=name).click()
        if self._asked_since_idle():
            self.settle()

    def upload(self, path: Path, scope: Locator | None = None) -> None:
        """Pick `path` in the (first) file uploader, as a person does, and wait until the uploader lists it. A
        pick that lands while the page redraws the uploader (a tab's rerun on a busy machine) is lost, so a
        person who sees no file listed picks it again: so does this, once."""
        where = scope or self.page
        for again in (False, True):
            where.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(path))
            self.settle()
            listed = where.get_by_role("button", name=f"Remove {path.name}", exact=True)
            try:
                expect(listed.first).to_be_visible(timeout=10_000)
                return
            except AssertionError:
                if again:
                    raise

    def fill(self, label: str, value: str) -> None:
        box = self.page.get_by_label(label, exact=True)
        box.fill(value)

    def click(self, name: str, timeout: float = 120_000) -> None:
        self.press(self.page.get_by_role("button", name=name, exact=True))
        self.settle(timeout)

    def press(self, button: Locator, tries: int = 3) -> None:
        """Click `button` as a person does, and see that the click reached it and that the page sent the
        server its run. On a busy machine the page can move under the pointer between Playwright's aim and
        its click (a fragment drawn anew above the button): a click that lands beside the button is no press,
        and a person seeing the button still there clicks it. A click that reached the button is a press, and
        is never made again: one the page does not send is a lost press and fails here, saying whether the
        page's websocket closed meanwhile (the page sends nothing while it is down). What the server does with
        a press sent is the caller's to check. A button with a key is told apart by its `st-key-…` class,
        another by its text."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browser tests only

        mark = button.evaluate(
            "b => [...(b.closest('[class*=\"st-key-\"]') || b).classList].find(c => c.startsWith('st-key-'))"
            " || b.innerText.trim()"
        )
        for _ in range(tries):
            asked, closed = self.page.evaluate("[window.__stAsked || 0, window.__stClosed || 0]")
            self.page.evaluate(
                "(m) => { window.__pressed = false; document.addEventListener('click', (e) => {"
                " const b = e.target.closest('button'); window.__pressed = m.startsWith('st-key-')"
                " ? Boolean(e.target.closest('.' + CSS.escape(m))) : Boolean(b && b.innerText.trim() === m);"
                " }, {capture: true, once: true}); }",
                mark,
            )
            button.click()
            if not self.page.evaluate("window.__pressed === true"):
                continue
            try:  # the click's rerun leaves with the browser's next flush of widget states
                self.page.wait_for_function(
                    "(n) => (window.__stAsked || 0) > n", arg=asked, timeout=PRESS_SENDS_MS, polling=POLL_MS
                )
                return
            except PlaywrightTimeout:
                closes = int(self.page.evaluate("window.__stClosed || 0")) - int(closed)
                raise AssertionError(
                    f"a press on {mark!r} reached it and the page sent no run within {PRESS_SENDS_MS} ms "
                    f"({closes} websocket close(s) meanwhile); the page shows:\n{self.shown_text()}"
                ) from None
        raise AssertionError(f"{tries} clicks aimed at {mark!r} all landed beside it")

    def click_as_timer_fires(self, name: str, every_s: float, timeout: float = 120_000) -> None:
        """Click the button `name` in a `run_every=every_s` fragment the moment the fragment's timer fires:
        the timer's rerun leaves before the click's own, as it does now and then on a busy machine."""
        self.page.get_by_role("button", name=name, exact=True).evaluate(
            "(button, ms) => { button.click(); for (const t of window.__stTimers) if (t.ms === ms) t.fn(); }",
            every_s * 1000,
        )
        self.settle(timeout)

    def expect_text(self, text: str, timeout: float = 60_000) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browser tests only

        try:
            self.page.get_by_text(_as_shown(text)).first.wait_for(timeout=timeout)
        except PlaywrightTimeout:
            # What the page said instead is the whole diagnosis of a run that failed elsewhere (CI).
            raise AssertionError(
                f"{text!r} not shown within {timeout / 1000:.0f} s; the page shows:\n{self.shown_text()}"
            ) from None

    def expect_heading(self, name: str, timeout: float = 120_000) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browser tests only

        try:
            self.page.get_by_role("heading", name=name).first.wait_for(timeout=timeout)
        except PlaywrightTimeout:
            raise AssertionError(
                f"no heading {name!r} within {timeout / 1000:.0f} s; the page shows:\n{self.shown_text()}"
            ) from None

    def shown_text(self, limit: int = 3000) -> str:
        """The main area's text, its end first cut to `limit` characters, then the page's messages (alerts,
        exceptions: what a run said, wherever it drew it), last as a log's tail keeps them (or why it
        could not be read)."""
        try:
            said = self.page.locator("[data-testid='stAlert'], [data-testid='stException']").all_inner_texts()
            text = self.page.locator("[data-testid='stMain']").inner_text(timeout=5_000)
        except Exception as exc:  # noqa: BLE001 - a diagnosis must not mask the failure it explains
            return f"(unreadable: {type(exc).__name__})"
        shown = text if len(text) <= limit else "…" + text[-limit:]
        return shown + "".join(f"\n[message] {m.strip()[:500]}" for m in said)

    def shot(self, name: str) -> None:
        """The whole page, for a person to look at (when `SHOOTING`)."""
        if SHOOTING:
            self._whole_page(name)

    def _whole_page(self, name: str) -> None:
        """Streamlit scrolls inside its main container, so grow the viewport to fit it."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        size = self.page.viewport_size
        assert size is not None  # every page here is opened with a viewport
        height = self.page.evaluate(
            "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section')]"
            ".map(e => e.scrollHeight), document.body.scrollHeight)"
        )
        self.page.set_viewport_size(
            {"width": size["width"], "height": min(max(height, size["height"]), 6000)}
        )
        painted(self.page)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        self.page.set_viewport_size(size)

    def failure(self, name: str) -> None:
        """What the page showed when a test failed: the whole page, and beside it the page's address and its
        accessibility tree (`NAME.txt`), which say what was drawn when the screenshot cannot."""
        text = f"{self.page.url}\n\n{self.page.locator('body').aria_snapshot()}\n"
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}.txt").write_text(text)
        self._whole_page(name)

    def screen(self, name: str) -> None:
        """What one screen shows, without scrolling (the viewport as it is), for a person (`SHOOTING`)."""
        if not SHOOTING:
            return
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"))

    def keys_to_the_page(self) -> None:
        """Take the focus out of any field and wait until the page's keyboard shortcuts listen
        (app/ui/keys.py): a key pressed before that would be lost."""
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        self.page.locator("html[data-shortcuts='on']").wait_for(state="attached")

    def no_exception(self) -> None:
        assert self.page.locator("[data-testid='stException']").count() == 0


def app_client(data_dir: Path) -> Client:
    """A client of the workbench's own embedded service over `data_dir` (its address is in its log)."""
    url_line = [x for x in (data_dir / "service.log").read_text().splitlines() if "ready on http" in x][-1]
    return Client(url_line.split("ready on ")[1].strip(), (data_dir / KEY_FILE).read_text().strip())


_KEY = re.compile(r"sk_[0-9a-f]{12}_[A-Za-z0-9_-]{20,100}")


def named_key(
    data_dir: Path, namespace: str, name: str, scope: str = "authoring", role: str = "owner"
) -> str:
    """A key named `name` of the service whose data is in `data_dir`: `python -m service keys create`, run in
    this process (tests/service/test_server.py runs the command as a process; here a start of the
    interpreter for each of a team's keys would be most of the fixture's time)."""
    from service.__main__ import main

    argv = ["keys", "create", "--namespace", namespace, "--scope", scope, "--name", name, "--role", role,
            "--data-dir", str(data_dir)]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        os.environ.pop("SCORING_DATABASE_URL", None)  # the service's own database: the one in `data_dir`
        code = main(argv)
    found = _KEY.search(out.getvalue())
    assert code == 0 and found, err.getvalue()
    return found.group(0)


# A pool of 300 support replies (opening × body × closing), none of them one of the support-replies demo's
# samples: what a team's browser tests label.
_OPENINGS = [
    "Thank you for your patience.",
    "Sorry for the wait.",
    "Hi,",
    "Ok.",
    "As I said before,",
    "Thanks!",
]
_BODIES = [
    "your refund was sent today",
    "the parcel left our warehouse on Monday",
    "the invoice is attached to this message",
    "we cannot change the delivery address now",
    "your account is unlocked again",
    "the replacement ships tomorrow morning",
    "the coupon expired last week",
    "you need to reset the router yourself",
    "the technician comes on Friday between 9 and 12",
    "we do not refund opened items",
]
_CLOSINGS = ["", "Have a lovely day.", "Anything else?", "Read the FAQ next time.", "Happy to help further."]
SUPPORT_REPLIES = [
    " ".join(p for p in parts if p) for parts in itertools.product(_OPENINGS, _BODIES, _CLOSINGS)
]
