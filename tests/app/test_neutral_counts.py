"""The workbench says how many neutral labels (quality 0.5, on neither pole) it holds and what they are left
out of: the Traits page, the Training page's metrics and the Versions page's evaluation (real service)."""

from __future__ import annotations

import pytest
import streamlit as st

from core.client import Client
from core.local import LocalService
from tests.support.app import CASUAL, FORMAL, make_draft, new_handle
from tests.support.apptest import no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

NEUTRAL = ["The parcel arrived on Tuesday.", "The meeting is in room four."]


def _neutral(texts_: list[str]) -> list[dict[str, object]]:
    return [{"trait": "formality", "text": t, "quality": 0.5} for t in texts_]


def test_the_traits_and_training_pages_say_neutral_samples_are_left_out(
    local_service: LocalService, client: Client
) -> None:
    handle = make_draft(client, new_handle(local_service, "neutral-samples"))
    client.add_samples(handle, _neutral(NEUTRAL))
    at = page("traits", handle)
    at.run()
    no_exception(at)
    note = "2 neutral samples (quality 0.5) are left out of training: they are on neither pole."
    assert note in texts(at.caption)

    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    st.cache_data.clear()  # the pages' cached reads of the draft: it trained through the test's own client
    at = page("training", handle)
    at.run()
    no_exception(at)
    metrics = next(d.value for d in at.dataframe if "roc_auc" in d.value.columns)
    assert list(metrics["neutral"]) == [2] and list(metrics["positive"]) == [len(FORMAL)]
    assert note in texts(at.caption)


def test_the_versions_page_counts_neutral_items_and_says_what_they_are_left_out_of(
    local_service: LocalService, client: Client
) -> None:
    handle = make_draft(client, new_handle(local_service, "neutral-eval"))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    items = [{"trait": "formality", "text": f"{t} (held out)", "quality": 1.0} for t in FORMAL]
    items += [{"trait": "formality", "text": f"{t} (held out)", "quality": 0.0} for t in CASUAL]
    client.add_evaluation_items(handle, items + _neutral(NEUTRAL))
    client.wait(handle, client.evaluate(handle, "v1").run_id, timeout=120)
    at = page("versions", handle)
    at.run()
    no_exception(at)
    shown = texts(at.caption)
    counts = f"{len(items) + 2} items: formality {len(FORMAL)}+ / {len(CASUAL)}− / 2 neutral"
    assert counts in shown
    note = "2 neutral items (quality 0.5) are left out of ROC-AUC, accuracy and F1: they are on neither pole."
    assert note in shown
    table = next(d.value for d in at.dataframe if "ROC-AUC" in d.value.columns)
    assert list(table["neutral"]) == [2] and list(table["items"]) == [len(items) + 2]
