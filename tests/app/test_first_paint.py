"""What a page does before its first paint: heavy imports and slow reads wait until after it.

The import check runs the page in a fresh interpreter (AppTest against the test service), where `sys.modules`
says what the page itself pulled in; the test process has imported everything already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import httpx
import pytest

from app.labelling.session import LabelSession
from app.labelling.suggestion_queue import first_suggestions_ready, start
from core.client import Client
from core.local import LocalService
from tests.app.test_pages import POOL
from tests.support.app import ROOT

pytestmark = pytest.mark.usefixtures("app_env")

# Seconds of a cold first paint on two busy cores, none of it needed before the AUC chart is asked for.
HEAVY = ("sklearn", "scipy", "onnxruntime", "altair")

# The page's first run, then (once its background suggestions have come) the next one.
RUN_PAGE = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=90)
at.session_state["model"] = sys.argv[2]
at.run()
pending = at.session_state["label_session"].pending
if pending is not None:
    pending.result(timeout=90)
    at.run()
errors = [e.value for e in at.exception]
shown = [str(e.value) for e in at.markdown]
print(json.dumps({"exceptions": errors, "modules": sorted(sys.modules), "shown": shown}))
"""


def test_label_page_first_paint_leaves_heavy_imports_for_the_chart(client: Client, draft: str) -> None:
    client.import_pool(draft, POOL)
    out = subprocess.run(
        [sys.executable, "-c", RUN_PAGE, str(ROOT / "pages" / "label.py"), draft],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert not result["exceptions"]
    assert any(text in shown for text in POOL for shown in result["shown"])  # a suggestion to label
    loaded = {name.split(".")[0] for name in result["modules"]}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


class HeldSuggestions(httpx.HTTPTransport):
    """The real service, with its answers to `/pool/suggest` held back until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/pool/suggest"):
            assert self.release.wait(timeout=60)
        return super().handle_request(request)


def test_label_session_starts_without_waiting_for_suggestions(
    local_service: LocalService, draft: str
) -> None:
    held = HeldSuggestions()
    with Client(local_service.url, local_service.api_key, transport=held) as client:
        client.import_pool(draft, POOL)
        session = LabelSession(draft, "formality")
        start(session, client)  # returns while the service's answer is held: the page can paint
        assert session.current is None and not first_suggestions_ready(session, client)
        held.release.set()
        assert session.pending is not None
        session.pending.result(timeout=60)
        assert first_suggestions_ready(session, client)
        assert session.current is not None and session.current["text"] in POOL and not session.error
