"""A page's inputs keep their place and their value when the browser draws them afresh (AppTest, real
service).

A watched run's end reruns the page: an input moved to another position (a note or a chart appeared above it)
is drawn anew, empty of what was typed but not yet sent. And a widget seeded in session state that the browser
draws afresh starts from its own default and sends it back: that default must be the seeded value."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_util import by_label, main_app, no_exception, page, run_label_page

pytestmark = pytest.mark.usefixtures("app_env")


def _opened(name: str, handle: str) -> AppTest:
    at = page(name, handle)
    if name == "label":
        run_label_page(at)
    else:
        at.run()
    no_exception(at)
    return at


def test_label_page_s_overlap_slider_defaults_to_the_kept_setting(trained: str) -> None:
    at = page("label", trained)
    at.session_state["_label_overlap"] = 40
    run_label_page(at)
    no_exception(at)
    slider = by_label(at.slider, "Overlap with colleagues")
    assert slider.value == 40 and list(slider.proto.default) == [40]


def test_settings_public_address_box_defaults_to_the_address() -> None:
    at = page("settings")
    at.session_state["public_url"] = "https://workbench.example.com"
    at.run()
    no_exception(at)
    box = by_label(at.text_input, "Public address of the workbench")
    assert box.value == box.proto.default == "https://workbench.example.com"


def test_models_open_box_defaults_to_the_picked_model(draft: str, trained: str) -> None:
    listed = list(by_label(_opened("models", trained).selectbox, "Open a model").options)
    picked = next(
        h for h in listed[1:] if h in (draft, trained)
    )  # not the first: that is Streamlit's default
    box = by_label(_opened("models", picked).selectbox, "Open a model")
    assert box.value == picked and box.proto.default == box.index


def test_sidebar_pickers_default_to_the_model_and_namespace_in_use(draft: str, trained: str) -> None:
    at = main_app()
    at.run()
    listed = list(at.sidebar.selectbox(key="model_picker").options)
    picked = next(
        h for h in listed[1:] if h in (draft, trained)
    )  # not the first: that is Streamlit's default
    at = main_app()
    at.session_state["model"] = picked
    at.run()
    no_exception(at)
    # The namespace picker shows only for a key of several namespaces (tests/app/test_keys.py).
    for picker in at.sidebar.selectbox:
        assert picker.proto.default == picker.index, picker.key
    assert at.sidebar.selectbox(key="model_picker").value == picked
