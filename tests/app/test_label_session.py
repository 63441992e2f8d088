"""The Label page's session beside a colleague (app/labelling/suggestion_queue.py, key_presses.py), against
the real local service: a text a colleague's vote filled meanwhile is passed over, nothing is lost, an empty
queue says why (naming colleagues only when they hold texts), texts added to the pool reach an open queue,
and the queue follows a campaign changed while it is open."""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent import futures

from app.labelling.key_presses import apply_key
from app.labelling.session import LabelSession
from app.labelling.suggestion_queue import first_suggestions_ready, follow_campaign, poll, refill, start
from core.client import Client, TransportError
from core.local import LocalService
from tests.app.test_pages import POOL

KEY_RE = re.compile(r"sk_[0-9a-f]{12}_[A-Za-z0-9_-]+")


def colleague(local_service: LocalService, name: str) -> Client:
    cmd = [sys.executable, "-m", "service", "keys", "create", "--namespace", local_service.namespace]
    cmd += ["--scope", "authoring", "--name", name, "--data-dir", str(local_service.data_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    match = KEY_RE.search(done.stdout)
    assert match, done.stdout + done.stderr
    return Client(local_service.url, match.group(0))


def test_a_text_a_colleague_filled_meanwhile_is_passed_over(local_service: LocalService, draft: str) -> None:
    with (
        local_service.client() as owner,
        colleague(local_service, "sess-alice") as alice,
        colleague(local_service, "sess-bob") as bob,
    ):
        owner.import_pool(draft, POOL[:3])
        model = owner.get_model(draft)
        session = LabelSession(draft, "formality")
        refill(session, alice)
        held = [item["id"] for item in session.queue]
        assert len(held) == 3
        # A file's row with the first text, another rater's vote (the owner's own would be refused while alice
        # holds the text: docs/api/pool.md): it fills the text (one vote wanted) while alice has it queued.
        first = session.queue[0]["text"]
        row = {"trait": "formality", "text": first, "quality": 1.0, "annotator": "file-rater"}
        owner.add_samples(draft, [row])
        apply_key(session, "2", alice, model)
        assert session.error == "" and "not stored" in session.message and "colleagues" in session.message
        assert [item["id"] for item in session.queue] == held[1:] and session.history == []
        apply_key(session, "1", alice, model)  # the next one is stored as usual
        assert len(session.history) == 1
        # Bob finds the last text held by alice: his empty answer says so.
        theirs = LabelSession(draft, "formality")
        refill(theirs, bob)
        assert theirs.queue == [] and theirs.message.startswith("1 of the texts left are held by colleagues")


def test_a_lone_analysts_queue_never_stops_while_texts_are_left(
    local_service: LocalService, draft: str
) -> None:
    """Alone: a text passed over with → is still hers, so it comes back when the queue runs out (it is never
    counted as held by colleagues, who do not exist), and texts added to the pool reach the open queue."""
    with local_service.client() as me:
        me.import_pool(draft, POOL[:3])
        model = me.get_model(draft)
        session = LabelSession(draft, "formality")
        refill(session, me)
        held = [item["id"] for item in session.queue]
        apply_key(session, "ArrowRight", me, model)  # passed over, not skipped: still claimed by her
        apply_key(session, "1", me, model)
        apply_key(session, "2", me, model)
        assert session.current is not None and session.current["id"] == held[0]
        assert "colleague" not in session.message and session.left == 1
        apply_key(session, "1", me, model)
        assert session.current is None and session.left == 0
        assert not poll(session, me, 3)  # the pool is done and the same: nothing asked

        me.add_pool_texts(draft, POOL[3:5])  # added elsewhere (a notebook, another tab)
        assert poll(session, me, 5)
        assert session.current is not None and session.left == 2 and "colleague" not in session.message
        apply_key(session, "0", me, model)  # skipped: not offered again in this session
        apply_key(session, "1", me, model)
        assert session.current is None and session.left == 1
        assert "colleague" not in session.message and "skipped" in session.message


def test_a_campaign_change_requeues_after_the_text_shown(local_service: LocalService, draft: str) -> None:
    """The owner wants more votes while the page is open: the text shown stays, the rest is asked afresh
    under the new campaign, and the count follows the next answer and the votes each label completes."""
    with local_service.client() as owner, colleague(local_service, "sess-carol") as carol:
        owner.import_pool(draft, POOL[:6])
        session = LabelSession(draft, "formality")
        model = owner.get_model(draft)
        follow_campaign(session, carol, (model.overlap, model.votes_wanted))
        refill(session, carol)
        shown = session.current
        assert shown is not None and session.left == 6
        owner.update_model(draft, votes_wanted=3)
        model = owner.get_model(draft)
        follow_campaign(session, carol, (model.overlap, model.votes_wanted))
        assert session.current == shown and session.campaign == (model.overlap, 3)
        apply_key(session, "2", carol, model)
        assert session.error == "" and "not stored" not in session.message and len(session.history) == 1
        assert session.left == 6  # the first of 3 votes: the text still wants votes, and counts


def test_a_press_refused_for_a_sign_in_says_it_was_not_stored(
    local_service: LocalService, draft: str
) -> None:
    """The service no longer takes the credential (signed out in another tab): the session keeps why, for
    the signed-out page, and says the label was not stored; a failed press never passes silently."""
    with local_service.client() as me:
        me.import_pool(draft, POOL[:2])
        model = me.get_model(draft)
        session = LabelSession(draft, "formality")
        refill(session, me)
        with Client(local_service.url, "sk_000000000000_signed-out-long-ago-xxxxx") as gone:
            apply_key(session, "2", gone, model)
        assert session.signed_out and session.message == "That label was not stored."
        assert session.history == []
        assert not [s for s in me.list_samples(draft) if s.text == session.queue[0]["text"]]


def test_a_text_the_evaluation_set_took_meanwhile_is_refused_and_passed_over(
    local_service: LocalService, draft: str
) -> None:
    """The queue was fetched before the same texts became the evaluation set: a press on one is refused with
    the reason, nothing is stored, and the next text is shown."""
    with local_service.client() as me:
        me.import_pool(draft, POOL[:3])
        model = me.get_model(draft)
        session = LabelSession(draft, "formality")
        refill(session, me)
        queued = [item["id"] for item in session.queue]
        first = session.queue[0]["text"]
        added = me.add_evaluation_items(draft, [{"trait": "formality", "text": first, "quality": 1.0}])
        assert added.in_pool == 1
        apply_key(session, "2", me, model)
        assert session.error == "" and "evaluation set" in session.message and "not stored" in session.message
        assert [item["id"] for item in session.queue] == queued[1:] and session.history == []
        assert not [s for s in me.list_samples(draft) if s.text == first]


def test_failed_suggestions_are_asked_again_without_a_reload(local_service: LocalService, draft: str) -> None:
    """The service out of reach: the page keeps the failure, and the status line's poll asks again by itself
    (as *Try again* does): once the service answers, texts are queued, no reload needed. (Unreachable rather
    than a tiny timeout: a timeout's outcome depends on the machine's load; a refused connection does not.)"""
    with (
        local_service.client() as owner,
        Client("http://127.0.0.1:1/v1", local_service.api_key, retries=0) as impatient,
    ):
        owner.import_pool(draft, POOL[:3])
        session = LabelSession(draft, "formality")
        start(session, impatient)
        assert session.pending is not None
        futures.wait([session.pending], timeout=60)
        assert first_suggestions_ready(session, impatient)
        failure = session.failure
        assert failure is not None and failure.suggesting and isinstance(failure.exc, TransportError)
        assert session.current is None
        assert not poll(session, impatient, 3) and session.failure is not None  # failing still, kept
        assert poll(session, owner, 3), "the poll did not ask again after a failure"
        assert session.failure is None and session.current is not None and session.current["text"] in POOL
