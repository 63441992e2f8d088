"""What a page's first paint imports (issue 28): heavy libraries wait until the part that needs them is used.

Each check runs the page in a fresh interpreter (AppTest against the test service), where `sys.modules` says
what the page itself pulled in; the test process has imported everything already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.client import Client
from tests.app.support import ROOT
from tests.app.test_pages import POOL

pytestmark = pytest.mark.usefixtures("app_env")

# Seconds of a cold first paint on two busy cores, none of it needed before the AUC chart is asked for.
HEAVY = ("sklearn", "scipy", "onnxruntime", "altair")

RUN_PAGE = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=90)
at.session_state["model"] = sys.argv[2]
at.run()
errors = [e.value for e in at.exception]
shown = [str(e.value) for e in at.markdown]
print(json.dumps({"exceptions": errors, "modules": sorted(sys.modules), "shown": shown}))
"""


def first_paint(page: str, handle: str) -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", RUN_PAGE, str(ROOT / "pages" / f"{page}.py"), handle],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_label_page_first_paint_leaves_heavy_imports_for_the_chart(client: Client, draft: str) -> None:
    client.import_pool(draft, POOL)
    result = first_paint("label", draft)
    assert not result["exceptions"]
    assert any(text in shown for text in POOL for shown in result["shown"])  # a suggestion to label
    loaded = {name.split(".")[0] for name in result["modules"]}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
