"""The Traits page's add and delete forms, and what it offers a trained model (AppTest, real service)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.client import Client
from tests.support.apptest import by_label, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")


def _fill_trait(at: AppTest, name: str, negative: str = "calm", positive: str = "energetic") -> None:
    by_label(at.text_input, "Name").set_value(name)
    by_label(at.text_input, "Negative pole label").set_value(negative)
    by_label(at.text_input, "Positive pole label").set_value(positive)


def test_traits_add_form_clears_and_refuses_a_second_trait_of_the_same_name(
    client: Client, draft: str
) -> None:
    at = page("traits", draft)
    at.run()
    assert by_label(at.text_area, "Description")  # a box for a sentence per pole, not one line
    _fill_trait(at, "Energy")
    by_label(at.text_area, "Description").set_value(
        "How lively a text is.\nCalm: measured. Energetic: excited."
    )
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]
    assert (client.list_traits(draft)[1].description or "").count("\n") == 1
    # The form is empty for the next trait.
    assert [by_label(at.text_input, label).value for label in ("Name", "Negative pole label")] == ["", ""]
    assert by_label(at.text_area, "Description").value == ""

    _fill_trait(at, "energy ")  # the same name again (case and spaces aside)
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert any("already has a trait named" in e and "`energy`" in e for e in texts(at.error)), texts(at.error)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]  # no energy_2

    _fill_trait(at, "Energy!")  # another name with the same key: refused, not silently skipped
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert any("already has a trait named" in e and "`energy`" in e for e in texts(at.error)), texts(at.error)
    assert not any("Added trait" in s for s in texts(at.success)), texts(at.success)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]


def test_traits_delete_asks_for_confirmation(client: Client, draft: str) -> None:
    at = page("traits", draft)
    at.run()
    at.multiselect(key="traits_delete_pick").select("formality")
    at.run()
    assert at.button(key="traits_delete").disabled  # not before the confirmation
    assert any("removes" in w and "cannot be undone" in w for w in texts(at.warning)), texts(at.warning)
    at.checkbox(key="traits_delete_sure").check()
    at.run()
    at.button(key="traits_delete").click()
    at.run()
    no_exception(at)
    assert list(client.list_traits(draft)) == []


def test_traits_of_a_trained_model_offer_no_save(trained: str) -> None:
    at = page("traits", trained)
    at.run()
    no_exception(at)
    assert not [c for c in texts(at.caption) if "then save" in c]
    assert not [b for b in at.button if b.label == "Save trait edits"]
