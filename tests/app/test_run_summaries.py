"""Discover and Synthesize end with what they added and a link to it."""

from __future__ import annotations

from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from core.client import Client
from core.local import LocalService
from tests.support.app import FORMALITY, PAGES, SENTIMENT, make_draft, new_handle
from tests.support.apptest import main_app, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")


def _links(at: AppTest) -> list[tuple[str, str]]:
    """(label, page) of every st.page_link on the page."""
    out = []
    for element in at.get("page_link"):
        proto = element.proto
        out.append((proto.label, proto.page))
    return out


def test_discover_says_which_traits_it_added_with_a_link(local_service: LocalService, client: Client) -> None:
    handle = make_draft(client, new_handle(local_service, "summary-discover"), (FORMALITY, SENTIMENT))
    at = main_app()
    at.session_state["model"] = handle
    at.run()
    at.switch_page(str(PAGES / "traits.py"))
    at.run()
    at.select_slider(key="discover_effort").set_value("low")
    at.button(key="discover_go").click()
    at.run()
    no_exception(at)
    client.wait(handle, timeout=120)
    at.run()
    no_exception(at)
    added = [t for t in client.list_traits(handle) if t.kind == "intrinsic"]
    assert added
    exemplars = len(list(client.list_samples(handle, provenance="discovered")))
    plural = "s" if len(added) != 1 else ""
    summary = [s for s in texts(at.success) if s.startswith("Discovery added")]
    assert summary == [
        f"Discovery added {len(added)} trait{plural}: "
        + ", ".join(f"**{t.name}** (`{t.key}`)" for t in added)
        + f", with {exemplars} exemplar samples."
    ], texts(at.success)
    assert ("See the exemplar samples", "samples") in _links(at)
    at.run()  # it stays until the next discovery
    assert any(s.startswith("Discovery added") for s in texts(at.success))


def test_synthesize_says_how_many_samples_it_added_per_trait(client: Client, draft: str) -> None:
    before = Counter(s.trait for s in client.list_samples(draft, provenance="synthesized"))
    at = page("samples", draft)
    at.run()
    at.select_slider(key="synth_effort").set_value("low")
    at.button(key="synth_go").click()
    at.run()
    no_exception(at)
    client.wait(draft, timeout=120)
    at.run()
    no_exception(at)
    now = Counter(s.trait for s in client.list_samples(draft, provenance="synthesized"))
    added = now - before
    assert added, "synthesis wrote samples"
    total = sum(added.values())
    expected = f"Synthesis added {total} samples: " + ", ".join(
        f"{n} to **Formality**" for k, n in sorted(added.items())
    )
    assert expected + "." in texts(at.success), texts(at.success)
    # Without a pool the texts are descriptions of the poles, and the page says so.
    notes = texts(at.info)
    assert any("descriptions of the poles" in t and "pool" in t for t in notes), notes
    linked = [label for label, _ in _links(at)] + texts(at.caption)  # run alone, a caption may name the page
    assert any("See the synthesized samples" in t for t in linked), linked


def test_a_summary_link_opens_the_samples_it_points_at(trained: str) -> None:
    at = main_app()
    at.session_state["model"] = trained
    at.query_params["provenance"] = "synthesized"
    at.run()
    at.switch_page(str(PAGES / "samples.py"))
    at.query_params["provenance"] = "synthesized"
    at.run()
    no_exception(at)
    assert at.selectbox(key="samples_provenance").value == "synthesized"
    assert "provenance" not in at.query_params  # the filter is the user's again
