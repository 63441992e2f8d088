"""The Traits page previews zero-shot scores as soon as both pole labels are typed (AppTest, real service)."""

from __future__ import annotations

import socket

import pytest
from streamlit.testing.v1 import AppTest

from app.labelling.trait_preview import PREVIEW_LOADING
from core.client import Client
from tests.support.apptest import by_label, no_exception, page, position, texts

pytestmark = pytest.mark.usefixtures("app_env")


def test_typing_pole_labels_shows_the_zero_shot_preview(client: Client, draft: str) -> None:
    at = page("traits", draft)
    at.run()
    no_exception(at)
    assert not at.dataframe or "score" not in at.dataframe[-1].value.columns  # nothing to preview yet
    by_label(at.text_input, "Negative pole label").set_value("sad, gloomy")
    at.run()
    assert not [d for d in at.dataframe if "score" in d.value.columns]  # one label is not an axis
    by_label(at.text_input, "Positive pole label").set_value("happy, cheerful")
    at.run()
    assert [d for d in at.dataframe if "score" in d.value.columns]  # the default probe texts, scored
    at.text_area(key="trait_probe_texts").set_value("A happy, cheerful morning!\nA sad and gloomy evening.")
    at.run()
    no_exception(at)
    shown = next(d.value for d in at.dataframe if "score" in d.value.columns)
    expected = client.preview_trait(
        draft,
        {"name": "Preview", "positive_label": "happy, cheerful", "negative_label": "sad, gloomy"},
        ["A happy, cheerful morning!", "A sad and gloomy evening."],
    ).scores
    assert shown["score"].tolist() == expected and expected[1] < 0.5 < expected[0]
    assert [t.key for t in client.list_traits(draft)] == ["formality"]  # previewing stores nothing

    by_label(at.text_input, "Name").set_value("Mood")
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "mood"]
    assert by_label(at.text_input, "Positive pole label").value == ""  # an empty form for the next trait


def test_the_add_trait_button_comes_before_the_preview(draft: str) -> None:
    """The Add trait button is drawn above the zero-shot preview, so the form is usable while the first
    preview waits on the service's model."""
    at = page("traits", draft)
    at.run()
    by_label(at.text_input, "Negative pole label").set_value("calm")
    by_label(at.text_input, "Positive pole label").set_value("angry")
    at.run()
    no_exception(at)
    assert position(at, "button", "Add trait") < position(at, "text_area", "Probe texts")
    assert "The first preview can take a minute while the service loads its model: go on." in texts(
        at.caption
    )


def _preview_of_a_silent_service(port: int) -> None:
    from app.labelling.trait_preview import zero_shot_preview
    from core.client import Client

    spec = {"name": "Mood", "positive_label": "happy", "negative_label": "sad", "description": ""}
    with Client(f"http://127.0.0.1:{port}/v1", "key", timeout=0.3, retries=0) as slow:
        zero_shot_preview(slow, "m", spec)


def test_a_preview_that_times_out_says_the_model_is_loading() -> None:
    """A preview the service does not answer in time (it accepts the request but is still loading its
    model) says so in the user's words, not as a failure."""
    with socket.socket() as silent:  # accepts connections and never answers, as a service busy loading
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        at = AppTest.from_function(_preview_of_a_silent_service, args=(silent.getsockname()[1],))
        at.run(timeout=30)
    no_exception(at)
    assert texts(at.info) == [PREVIEW_LOADING]
    assert not at.error
