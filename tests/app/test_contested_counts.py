"""Contested texts (votes on both poles, not settled) are counted apart from neutral ones: in a version's
training metrics and on the Training page, which offers the way to settle them; graded votes a hair either
side of the middle are not contested, and settle in the middle (real service)."""

from __future__ import annotations

import pytest
import streamlit as st

from app.ui.inert import escape_md
from core.client import Client
from core.local import LocalService
from tests.support.app import make_draft, named_key, new_handle, new_key_name
from tests.support.apptest import card_of, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

SPLIT = "The report is due whenever, no rush."  # one vote each way: averages to the middle
LEANING = "Kindly find the minutes attached, cheers."  # two votes formal, one casual: trains at 2/3
NEUTRAL = "The parcel arrived on Tuesday."  # labelled neutral by one person: not a disagreement
# A file rated -4..+4 by two raters, as qualities: mean ratings of -0.08 and +0.08 are noise around the
# middle; -2 and +2 are a disagreement.
NEAR = "The meeting moved to Thursday, see you there."
APART = "Hey, the meeting moved, whatever works."


def test_contested_texts_are_counted_apart_from_neutral_ones(
    local_service: LocalService, client: Client, monkeypatch: pytest.MonkeyPatch
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
    # The table's neutral count is the sentence's: the text whose votes average to the middle is contested,
    # counted in the warning below, not as a neutral label.
    metrics = next(d.value for d in at.dataframe if "roc_auc" in d.value.columns)
    assert list(metrics["neutral"]) == [1]
    warning = " ".join(texts(at.warning))
    assert "2 contested text(s): votes on both poles, not settled" in warning
    assert "1 average to the middle and are left out of training" in warning
    assert "1 train at the mean of their votes" in warning
    at.button(key="training_settle").click().run()
    no_exception(at)
    assert at.session_state["samples_tab"] == "Disagreements"
    # An annotator reads the same counts, but settling is a reviewer's: no button, the reason instead.
    annotator = named_key(
        local_service.data_dir, local_service.namespace, new_key_name("cc"), role="annotator"
    )
    monkeypatch.setenv("SCORING_API_KEY", annotator)
    at = page("training", handle)
    at.run()
    no_exception(at)
    assert "2 contested text(s): votes on both poles, not settled" in " ".join(texts(at.warning))
    assert not [b for b in at.button if b.key == "training_settle"]
    lock = ":material/lock: Settling the contested texts needs the reviewer role; your key is an annotator."
    assert lock in texts(at.caption)


def test_graded_votes_a_hair_either_side_of_the_middle_are_not_contested_and_settle_in_the_middle(
    local_service: LocalService, client: Client
) -> None:
    """On graded votes a reviewer settles on a pole or in the middle, and the middle stores 0.5; votes 0.49
    and 0.51 are listed as differing, not as a contradiction."""
    handle = make_draft(client, new_handle(local_service, "graded"))
    votes = [
        (NEAR, 0.49, "rater-1"),
        (NEAR, 0.51, "rater-2"),
        (APART, 0.25, "rater-1"),
        (APART, 0.75, "rater-2"),
    ]
    client.add_samples(
        handle, [{"trait": "formality", "text": t, "quality": q, "annotator": who} for t, q, who in votes]
    )
    listed = {d.text: d.contested for d in client.agreement(handle).traits["formality"].disagreed}
    assert listed == {APART: True, NEAR: False}
    at = page("samples", handle)
    at.run()
    no_exception(at)
    near = card_of(at, escape_md(NEAR))
    assert any(e.type == "markdown" and e.value.startswith("**votes differ**") for e in near)
    assert any(e.type == "markdown" and e.value.startswith("**:material/call_split: contested**")
               for e in card_of(at, escape_md(APART)))  # fmt: skip
    # APART spreads more: listed first. Each graded text may be settled on a pole or in the middle.
    assert [b.key for b in at.button if (b.key or "").startswith("disagree_settle_1_")] == [
        "disagree_settle_1_0",
        "disagree_settle_1_0.5",
        "disagree_settle_1_1",
    ]
    at.button(key="disagree_settle_1_0.5").click().run()
    no_exception(at)
    said = [e.value for e in card_of(at, escape_md(NEAR)) if e.type == "success"]
    middle = "Settled as “neither pole \\(the middle\\)”: your vote puts it on neither pole"
    assert said == [f"{middle}, so training leaves it out."]
    settled = [(s.text, s.quality) for s in client.list_samples(handle) if s.adjudicated]
    assert settled == [(NEAR, 0.5)]
