"""The Label page's session beside a colleague (app/labelling/session.py), against the real local service: a
text a colleague's vote filled meanwhile is passed over, nothing is lost, and an empty queue says why."""

from __future__ import annotations

import re
import subprocess
import sys

from app.labelling.session import LabelSession, act, refill
from core.client import Client
from core.local import LocalService
from tests.app.test_pages import POOL

KEY_RE = re.compile(r"sk_[0-9a-f]{12}_[A-Za-z0-9_-]+")


def colleague(service: LocalService, name: str) -> Client:
    cmd = [sys.executable, "-m", "service", "keys", "create", "--namespace", service.namespace]
    cmd += ["--scope", "authoring", "--name", name, "--data-dir", str(service.data_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    match = KEY_RE.search(done.stdout)
    assert match, done.stdout + done.stderr
    return Client(service.url, match.group(0))


def test_a_text_a_colleague_filled_meanwhile_is_passed_over(service: LocalService, draft: str) -> None:
    with (
        service.client() as owner,
        colleague(service, "sess-alice") as alice,
        colleague(service, "sess-bob") as bob,
    ):
        owner.import_pool(draft, POOL[:3])
        model = owner.get_model(draft)
        session = LabelSession(draft, "formality")
        refill(session, alice)
        held = [item["id"] for item in session.queue]
        assert len(held) == 3
        # A file's row with the first text: a vote that fills it (one vote wanted) while alice has it queued.
        first = session.queue[0]["text"]
        owner.add_samples(draft, [{"trait": "formality", "text": first, "quality": 1.0}])
        act(session, "2", alice, model)
        assert session.error == "" and "colleague labelled that text" in session.message
        assert [item["id"] for item in session.queue] == held[1:] and session.history == []
        act(session, "1", alice, model)  # the next one is stored as usual
        assert len(session.history) == 1
        # Bob finds the last text held by alice: his empty answer says so.
        theirs = LabelSession(draft, "formality")
        refill(theirs, bob)
        assert theirs.queue == [] and theirs.message.startswith("1 of the texts left are held by colleagues")
