"""Contested texts (votes on both poles, not settled) are counted apart from neutral ones: in a version's
training metrics and on the Training page, which offers the way to settle them (real service)."""

from __future__ import annotations

import pytest
import streamlit as st

from core.client import Client
from core.local import LocalService
from tests.support.app import make_draft, new_handle
from tests.support.apptest import no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

SPLIT = "The report is due whenever, no rush."  # one vote each way: averages to the middle
LEANING = "Kindly find the minutes attached, cheers."  # two votes formal, one casual: trains at 2/3
NEUTRAL = "The parcel arrived on Tuesday."  # labelled neutral by one person: not a disagreement


def test_contested_texts_are_counted_apart_from_neutral_ones(
    local_service: LocalService, client: Client
) -> None:
    handle = make_draft(client, new_handle(local_service, "contested"))
    votes = [(SPLIT, 1.0, "alice"), (SPLIT, 0.0, "bob"), (LEANING, 1.0, "alice"), (LEANING, 1.0, "carol"),
             (LEANING, 0.0, "bob"), (NEUTRAL, 0.5, "alice")]  # fmt: skip
    client.add_samples(
        handle, [{"trait": "formality", "text": t, "quality": q, "annotator": who} for t, q, who in votes]
    )
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    trait = client.get_version(handle, 1).metrics["traits"]["formality"]
    assert (trait["neutral_samples"], trait["contested"], trait["contested_neutral"]) == (2, 2, 1)

    st.cache_data.clear()  # the pages' cached reads of the draft: it trained through the test's own client
    at = page("training", handle)
    at.run()
    no_exception(at)
    assert "1 neutral samples (quality 0.5) are left out of training: they are on neither pole." in texts(
        at.caption
    )
    warning = " ".join(texts(at.warning))
    assert "2 contested text(s): votes on both poles, not settled" in warning
    assert "1 average to the middle and are left out of training" in warning
    assert "1 train at the mean of their votes" in warning
    at.button(key="training_settle").click().run()
    no_exception(at)
    assert at.session_state["samples_tab"] == "Disagreements"
