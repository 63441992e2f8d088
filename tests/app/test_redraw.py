"""A page's inputs keep their place and their value when the browser draws them afresh (AppTest, real
service).

A watched run's end reruns the page: an input moved to another position (a note or a chart appeared above it)
is drawn anew, empty of what was typed but not yet sent. And a widget seeded in session state that the browser
draws afresh starts from its own default and sends it back: that default must be the seeded value."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.client import Client
from core.contract import PROVENANCES
from core.local import LocalService
from tests.support.app import make_draft, new_handle
from tests.support.apptest import by_label, main_app, no_exception, page, position, run_label_page

pytestmark = pytest.mark.usefixtures("app_env")


def _opened(name: str, handle: str) -> AppTest:
    at = page(name, handle)
    if name == "label":
        run_label_page(at)
    else:
        at.run()
    no_exception(at)
    return at


def test_label_page_s_boxes_stay_put_when_the_model_becomes_trained(draft: str, trained: str) -> None:
    """A draft being trained has no note above the boxes; once trained (the rerun at the run's end) it has."""
    before, after = _opened("label", draft), _opened("label", trained)
    assert after.info, "the trained model's labelling note"
    assert position(before, "selectbox", "Suggest") == position(after, "selectbox", "Suggest")


def test_samples_tabs_stay_put_when_the_model_becomes_trained(draft: str, trained: str) -> None:
    before, after = _opened("samples", draft), _opened("samples", trained)
    assert after.info, "the trained model's labelling note"
    assert position(before, "selectbox", "Provenance") == position(after, "selectbox", "Provenance")


def test_samples_provenance_filter_of_a_link_is_its_own_default(draft: str) -> None:
    """A run summary links to what it added (?provenance=…): drawn afresh, the filter shows it."""
    linked = PROVENANCES[-1]
    at = page("samples", draft, provenance=linked)
    at.run()
    no_exception(at)
    box = by_label(at.selectbox, "Provenance")
    assert box.value == linked and box.proto.default == box.index


def test_a_link_to_what_a_run_added_opens_the_tab_that_lists_it(draft: str) -> None:
    """The tabs keep the user's tab; a run summary's link (followed from the Synthesize tab) still opens the
    samples it added on the tab that lists them."""
    at = page("samples", draft)
    at.session_state["samples_tab"] = "Synthesize"
    at.run()
    at.query_params["provenance"] = PROVENANCES[-1]
    at.run()
    no_exception(at)
    assert at.session_state["samples_tab"] == "Browse & add"
    assert by_label(at.selectbox, "Provenance").value == PROVENANCES[-1]


def test_versions_page_s_boxes_stay_put_when_a_second_version_lands(
    local_service: LocalService, client: Client, trained: str
) -> None:
    """One version has no chart above the Tag name box; a second one (a run's end) brings it."""
    handle = make_draft(client, new_handle(local_service, "oneversion"))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    before, after = _opened("versions", handle), _opened("versions", trained)
    for kind, label in (("text_input", "Tag name"), ("selectbox", "A")):
        assert position(before, kind, label) == position(after, kind, label), label
    probes = (
        "Probe texts (one a line; by default training samples), scored locally with both versions' snapshots"
    )
    assert position(before, "text_area", probes) == position(after, "text_area", probes)


def test_settings_public_address_box_defaults_to_the_address() -> None:
    at = page("settings")
    at.session_state["public_url"] = "https://workbench.example.com"
    at.run()
    no_exception(at)
    box = by_label(at.text_input, "Public address of the workbench")
    assert box.value == box.proto.default == "https://workbench.example.com"


def test_models_open_box_defaults_to_the_picked_model(draft: str, trained: str) -> None:
    listed = list(by_label(_opened("models", trained).selectbox, "Open a model").options)
    # Any listed model but the first (Streamlit's default): which ones the page lists depends on the models
    # earlier tests of this worker made in the namespace.
    assert len(listed) > 1, listed
    picked = listed[-1]
    box = by_label(_opened("models", picked).selectbox, "Open a model")
    assert box.value == picked and box.proto.default == box.index


def test_sidebar_pickers_default_to_the_model_and_namespace_in_use(draft: str, trained: str) -> None:
    at = main_app()
    at.run()
    listed = list(at.sidebar.selectbox(key="model_picker").options)
    assert len(listed) > 1, listed  # draft and trained at least
    picked = listed[-1]  # not the first: that is Streamlit's default
    at = main_app()
    at.session_state["model"] = picked
    at.run()
    no_exception(at)
    # The namespace picker shows only for a key of several namespaces (tests/app/test_keys.py).
    for picker in at.sidebar.selectbox:
        assert picker.proto.default == picker.index, picker.key
    assert at.sidebar.selectbox(key="model_picker").value == picked
