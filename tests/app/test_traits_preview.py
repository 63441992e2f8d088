"""The Traits page previews zero-shot scores as soon as both pole labels are typed (AppTest, real service)."""

from __future__ import annotations

import pytest

from core.client import Client
from tests.support.apptest import by_label, no_exception, page

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
