"""Every move between pages resolves: the one registry (app/ui/navigation.py) that the sidebar, every
`switch_page` and every `page_link` use, and each button that moves between pages pressed in the whole app
(app/main.py's navigation, as the browser runs it) against the real local service."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app.ui.navigation import PAGES, PAGES_DIR, script
from core.client import Client
from core.local import LocalService
from tests.support.app import ROOT, make_draft, new_handle
from tests.support.apptest import main_app, no_exception, page

pytestmark = pytest.mark.usefixtures("app_env")

MOVES = {"switch_page", "page_link"}  # Streamlit's two ways to another page
OURS = {"switch_to", "link_to"}  # the registry's


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def test_every_page_move_goes_through_the_registry_and_names_a_page() -> None:
    sources = [*(ROOT / "app").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]
    registry = ROOT / "app" / "ui" / "navigation.py"
    targets = []
    for path in sources:
        for call in _calls(path):
            name = _name(call)
            if name in MOVES:
                # A path built anywhere else resolved from app/ and missed the page (pages/training.py).
                assert path == registry, f"{path.relative_to(ROOT)}:{call.lineno} calls st.{name} directly"
            if name in OURS and call.args and isinstance(call.args[0], ast.Constant):
                targets.append(call.args[0].value)
    assert targets, "the pages move through the registry"
    assert set(targets) <= set(PAGES), set(targets) - set(PAGES)
    for name in PAGES:  # every registered script is there
        assert Path(script(name)).is_file() and Path(script(name)).parent == PAGES_DIR
    assert {p.stem for p in PAGES_DIR.glob("*.py")} == set(PAGES), "every page script is registered"


def _on(at: AppTest, name: str) -> AppTest:
    """Open page `name` as the sidebar does (AppTest resolves the path from app/)."""
    return at.switch_page(f"../pages/{name}.py").run()


def _running(at: AppTest) -> str:
    """Which registered page the last run drew: its title (each page starts with it)."""
    titles = {str(t.value).replace("\\", "") for t in at.title} | {str(h.value) for h in at.header}
    drawn = [n for n, entry in PAGES.items() if any(t.startswith(entry.title) for t in titles)]
    assert len(drawn) == 1, titles
    return drawn[0]


def _failures(at: AppTest) -> list[str]:
    return [str(e.value) for e in (*at.exception, *at.error)]


def test_every_registered_page_opens_without_an_error(trained: str) -> None:
    """Each page of the registry drawn once, on a trained model, from the whole app as the sidebar opens it:
    the pages' check in `make test-commit`. A page shows its own failures as an error message (`guard`), so
    one fails here as an exception does; what each page does is in test_pages.py. Team is listed on a team's
    workbench only, so it runs on its own."""
    st.cache_data.clear()  # the worker's earlier tests' reads
    at = main_app()
    at.query_params["model"] = trained
    at.run()
    raised = {"main": _failures(at)}
    for name, entry in PAGES.items():
        opened = page(name, trained).run() if entry.team_only else _on(at, name)
        raised[name] = _failures(opened)
    assert not any(raised.values()), {name: errors for name, errors in raised.items() if errors}


def test_the_settle_button_opens_the_disagreements_listing_a_files_contradiction(
    local_service: LocalService, client: Client
) -> None:
    """Two rows of one file with one text and opposite ratings: training counts the text contested, the
    button leads to the Disagreements tab, which lists it and settles it."""
    handle = make_draft(client, new_handle(local_service, "contra"))
    rows = [{"trait": "formality", "text": f"Plain sentence number {i} about the weather.", "quality": i % 2}
            for i in range(8)]  # fmt: skip
    twice = "We will circle back on the numbers whenever."
    rows += [{"trait": "formality", "text": twice, "quality": 1.0},
             {"trait": "formality", "text": twice, "quality": 0.0}]  # fmt: skip
    client.import_samples(handle, rows, provenance="imported")
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    assert client.get_version(handle, 1).metrics["traits"]["formality"]["contested"] == 1
    client.reopen(handle)  # settling is a sample edit

    st.cache_data.clear()
    at = main_app()
    at.query_params["model"] = handle
    at.run()
    _on(at, "training")
    no_exception(at)
    assert any("1 contested text(s)" in str(w.value) for w in at.warning)
    at.button(key="training_settle").click().run()
    no_exception(at)
    assert _running(at) == "samples"
    assert at.session_state["samples_tab"] == "Disagreements"
    listed = " ".join(str(m.value) for m in at.markdown)
    assert twice in listed.replace("\\", "")
    assert not any("votes that differ" in str(i.value) for i in at.info)
    # The browser's next run is on the page moved to; AppTest keeps the page it was told last: tell it.
    at.switch_page("../pages/samples.py")
    at.button(key="disagree_settle_0_1").click().run()
    no_exception(at)
    counted = [s for s in client.list_samples(handle) if s.text == twice]
    assert any(s.adjudicated and s.quality == 1.0 for s in counted)


def test_the_models_open_button_lands_on_a_registered_page(
    local_service: LocalService, client: Client
) -> None:
    handle = make_draft(client, new_handle(local_service, "open"))
    at = main_app()
    at.query_params["model"] = handle
    at.run()
    no_exception(at)
    at.selectbox(key="models_open_pick").set_value(handle)
    at.button(key="models_open").click().run()
    if _running(at) == "models":  # the switch happens on the page's next run (pages/models.py)
        at.run()
    no_exception(at)
    assert _running(at) == "samples"  # a draft with traits opens on its data
