"""The workbench's pure helpers: form checks, version tables, highlighting."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import pydantic
import pytest
from markdown_it import MarkdownIt

from app.evaluation.versions import (
    calibration_words,
    delta_color,
    metrics_diff_frame,
    per_trait_summary,
    signed,
    trait_metrics_frame,
    uncertain_roc_auc,
)
from app.samples.files import refused_rows, unknown_trait_hint
from app.scoring.demo import share_url
from app.scoring.preview import highlight_html
from app.ui.forms import check_handle, create_fields, parse_sources, trait_edits
from app.ui.inert import JOINER, escape_md
from app.ui.widgets import error_text
from core.client import Client, ConflictError, Version
from core.client.errors import ApiError, WaitTimeoutError
from core.engine.explain import NOISE_FLOOR, WordEffect


def test_check_handle() -> None:
    assert check_handle("acme.tone", ("acme",)) is None
    assert "not one this key owns" in (check_handle("other.tone", ("acme",)) or "")
    assert "handle is" in (check_handle("Acme.Tone", ("acme",)) or "")
    assert "handle is" in (check_handle("acme.a.b", ("acme",)) or "")


def test_create_fields_and_sources() -> None:
    assert parse_sources("https://a | A\n\nhttps://b") == [
        {"url": "https://a", "title": "A"},
        {"url": "https://b"},
    ]
    fields = create_fields(
        {"description": "d", "max_depth": 2.0, "upstream_sources": "", "readme_markdown": ""}
    )
    assert fields == {
        "description": "d",
        "scoring_method": "balanced_cosine",
        "kind": "scoring",
        "max_depth": 2,
        "zero_data_retention": False,
    }


def test_error_text_names_code_status_and_request_id() -> None:
    exc = ConflictError(409, "model_busy", "The model is busy.", request_id="req_abc", run_id="run_1")
    text = error_text(exc)
    assert escape_md("The model is busy.") in text and "`model_busy`" in text and "HTTP 409" in text
    assert "request id `req_abc`" in text and "run `run_1`" in text
    assert error_text(ValueError("A URL and a key are needed.")) == "**A URL and a key are needed.**"


def test_error_text_names_no_exception_class() -> None:
    # The client's own errors are sentences: a page shows them, not "WaitTimeoutError: …".
    gave_up = WaitTimeoutError("local.news", "run_1", 600, None)
    assert "WaitTimeoutError" not in error_text(gave_up) and "still going after 600s" in error_text(gave_up)
    assert error_text(RuntimeError("the index is gone")) == "**Something went wrong:** the index is gone"
    assert error_text(RuntimeError()) == "**Something went wrong** (RuntimeError)."  # nothing else to say


def test_a_service_message_quoting_input_is_shown_as_text() -> None:
    """A refusal may quote what was sent: a name written as a link, an image or an e-mail stays text."""
    quoted = "Unknown trait '[x](http://127.0.0.1:9/x) ![i](http://127.0.0.1:9/i.png) ann@example.com'."
    rendered = MarkdownIt("commonmark").render(error_text(ApiError(422, "unknown_trait", quoted)))
    assert "<a" not in rendered and "<img" not in rendered
    assert quoted in html.unescape(rendered).replace(JOINER, "")


def test_error_text_in_a_team_s_workbench_says_to_sign_in_again_not_to_go_to_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refused = ApiError(403, "forbidden", "This key has scoring scope.")
    assert "**Settings**" in error_text(refused)
    monkeypatch.setenv("SCORING_TEAM", "1")
    text = error_text(refused)
    assert "Settings" not in text
    assert "sign out and sign in with a key of the right scope" in text


def test_error_text_for_a_person_signed_in_through_the_provider_names_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCORING_TEAM", "1")
    for name in ("SCORING_OIDC_ISSUER", "SCORING_OIDC_CLIENT_ID", "SCORING_OIDC_CLIENT_SECRET"):
        monkeypatch.setenv(name, "x")
    refused = error_text(ApiError(403, "forbidden", "The annotator role may not do that."))
    expired = error_text(ApiError(401, "unauthorized", "The sign-in has expired."))
    assert "key" not in refused.lower() and "ask an owner" in refused
    assert "key" not in expired.lower() and "Sign out and sign in again." in expired


def test_error_text_speaks_the_users_words_for_unreachable_services_and_bad_input() -> None:
    with Client("http://127.0.0.1:9/v1", "sk_nope", retries=0) as dead:
        try:
            dead.list_models_page(limit=1)
        except Exception as exc:  # noqa: BLE001
            text = error_text(exc)
    assert "cannot be reached" in text and "nothing answers at that address" in text
    assert "Errno" not in text and "TransportError" not in text

    class Sample(pydantic.BaseModel):
        text: str = pydantic.Field(min_length=1)

    try:
        Sample(text="")
    except pydantic.ValidationError as exc:
        text = error_text(exc)
    assert text.startswith("**Please correct the input:** text: string should have at least 1 character")
    assert "pydantic.dev" not in text


def test_compare_colours_only_changes_beyond_the_noise_and_never_shows_minus_zero() -> None:
    counts = {"positive_samples": 40, "negative_samples": 40}
    a = {"traits": {"t": {**counts, "roc_auc": 0.800, "accuracy": 0.75}}}
    b = {"traits": {"t": {**counts, "roc_auc": 0.801, "accuracy": 0.95}}}
    diff = metrics_diff_frame(a, b)
    auc = diff[diff.metric == "roc_auc"].iloc[0]
    assert 0.03 < auc["se"] < 0.1  # Hanley-McNeil at 40 per pole, both versions
    assert delta_color(auc) == [""] * len(auc)  # +0.001 is within the noise: no colour
    acc = diff[diff.metric == "accuracy"].iloc[0]
    assert "46, 160, 67" in delta_color(acc)[3]  # +0.20 is far beyond it: green
    assert signed(-0.0002) == "0.000" and signed(0.0123) == "+0.012" and signed(-0.5) == "-0.500"


def test_a_trait_whose_poles_never_overlap_has_no_calibration_slope() -> None:
    """Out-of-fold scores that rank every positive above every negative fit any slope steeper than some: the
    figure (tens) is where the fit stopped, and read as "far too close to 0.5" it says the opposite of a
    small ECE. It is left out of the mean, named, blank in the tables and never coloured as a change."""
    apart = {"roc_auc": 1.0, "calibration_error": 0.07, "calibration_slope": 39.8}
    overlapping = {"roc_auc": 0.98, "calibration_error": 0.05, "calibration_slope": 1.4}
    zero_shot = {"roc_auc": 0.7, "calibration_error": 0.2, "calibration_slope": None}

    def version(**traits: Any) -> Version:  # Any: a trait's metrics, JSON as the API gives them
        return Version(version_id=1, version_no=1, metrics={"traits": traits})

    assert calibration_words(version(politeness=apart, empathy=overlapping)) == (
        "ECE 0.06, slope 1.40 (politeness: no slope, the poles never overlap)"
    )
    assert calibration_words(version(politeness=apart)) == "ECE 0.07, no slope (the poles never overlap)"
    reported_none = {**apart, "calibration_slope": None}  # as the engine reports such a trait now
    assert calibration_words(version(politeness=reported_none, empathy=overlapping)) == (
        "ECE 0.06, slope 1.40 (politeness: no slope, the poles never overlap)"
    )
    assert calibration_words(version(empathy=overlapping, tone=zero_shot)) == "ECE 0.12, slope 1.40"
    frame = trait_metrics_frame({"traits": {"politeness": apart, "empathy": overlapping}})
    assert frame.set_index("trait")["calibration_slope"].isna().to_dict() == {
        "politeness": True,
        "empathy": False,
    }
    diff = metrics_diff_frame({"traits": {"p": overlapping}}, {"traits": {"p": apart}})
    slope = diff[diff.metric == "calibration_slope"].iloc[0]
    assert slope["A"] == 1.4 and pd.isna(slope["B"]) and delta_color(slope) == [""] * len(slope)


def test_metrics_diff_and_colours() -> None:
    a = {"traits": {"t": {"roc_auc": 0.8, "calibration_error": 0.1}}}
    b = {"traits": {"t": {"roc_auc": 0.9, "calibration_error": 0.2}, "u": {"roc_auc": 0.7}}}
    diff = metrics_diff_frame(a, b)
    auc = diff[(diff.trait == "t") & (diff.metric == "roc_auc")].iloc[0]
    assert round(auc["B − A"], 6) == 0.1
    assert "46, 160, 67" in delta_color(auc)[3]  # better: green
    cal = diff[(diff.trait == "t") & (diff.metric == "calibration_error")].iloc[0]
    assert "248, 81, 73" in delta_color(cal)[3]  # calibration error went up: red
    new = diff[(diff.trait == "u") & (diff.metric == "roc_auc")].iloc[0]
    assert pd.isna(new["A"]) and new["B"] == 0.7


def test_per_trait_summary() -> None:
    probe = pd.DataFrame(
        [
            {"text": "a", "trait": "t", "A": 0.2, "B": 0.6, "B − A": 0.4},
            {"text": "b", "trait": "t", "A": 0.5, "B": 0.3, "B − A": -0.2},
        ]
    )
    row = per_trait_summary(probe).iloc[0]
    assert round(row["mean Δ"], 6) == 0.1 and round(row["mean |Δ|"], 6) == 0.3 and row["max |Δ|"] == 0.4


def _effects(text: str, strengths: list[float]) -> list[WordEffect]:
    return [WordEffect(w, 0.0, 0.0, s) for w, s in zip(text.split(), strengths, strict=True)]


def test_highlight_escapes_and_shades() -> None:
    out = highlight_html(
        "<b>Dear</b> friend",
        [
            {"word": "<b>Dear</b>", "contribution": 0.01, "axis": 0.5, "strength": 6.0},
            WordEffect("friend", 0, 0, -4),
        ],
        "<polite>",
        "rude",
    )
    assert "&lt;b&gt;" in out and "<b>" not in out and "<polite>" not in out
    assert 'title="+6.0× a filler word: towards &lt;polite&gt;"' in out and "rgba(59,125,216,0.38)" in out
    assert 'title="-4.0× a filler word: towards rude"' in out and "rgba(217,128,74,0.25)" in out


def test_highlight_shades_words_with_their_punctuation_each_occurrence_its_own() -> None:
    """The words "useless." and "junk," were never shaded; a word said twice showed its first weight."""
    text = "Broke in a week. useless. Pure junk, broke again"
    strengths = [-4.0, 0.0, 0.0, -0.1, -12.0, 0.1, -6.0, -5.0, 0.0]
    out = highlight_html(text, _effects(text, strengths), "positive", "negative")
    assert 'towards negative" style="background: rgba(217,128,74,0.75);' in out
    assert ">useless.</span>" in out and ">junk,</span>" in out
    assert out.count('title="-4.0×') == 1 and out.count('title="-5.0×') == 1  # "Broke" and "broke"
    assert out.count("<span title=") == len(
        text.split()
    )  # every explained word has its strength as a tooltip


def test_highlight_uses_one_fixed_scale_and_leaves_noise_uncoloured() -> None:
    """A word's colour is its own strength on a scale shared by every text, not stretched to the sentence's
    largest word: in a text whose words all barely move it, none is coloured (the darkest word of a
    confident sentence was "It"), and 6 looks the same beside 3 as beside 30."""
    quiet = "It is what it is"
    out = highlight_html(quiet, _effects(quiet, [2.9, -1.0, 0.5, 1.2, -2.4]), "positive", "negative")
    assert "rgba(" not in out.split("</div>")[0]  # the text: no word coloured
    assert out.count('too small to matter"') == 5
    strong = "fine words here"
    alone = highlight_html(strong, _effects(strong, [6.0, 3.0, 0.0]), "positive", "negative")
    beside = highlight_html(strong, _effects(strong, [6.0, 30.0, 0.0]), "positive", "negative")
    assert "rgba(59,125,216,0.38)" in alone and "rgba(59,125,216,0.38)" in beside  # "fine": half of full
    assert "rgba(59,125,216,0.75)" in beside  # "words" at 30: full colour, no more


def test_highlight_legend_says_what_a_colour_means() -> None:
    text = "Could you please help"
    out = highlight_html(text, _effects(text, [0.0, 0.0, 6.0, 3.0]), "polite", "impolite")
    legend = out.split("</div>")[1]
    assert "blue</span> pushes towards “polite”, " in legend and "orange</span> towards “impolite”" in legend
    assert f"Uncoloured: too small to matter (under {NOISE_FLOOR:g}× what removing a filler word" in legend
    assert "No single word" not in legend and "Only the first" not in legend
    # A confident text may owe its score to no single word; the legend says so rather than show nothing.
    whole = highlight_html(text, _effects(text, [1.0, -2.0, 2.5, 0.0]), "polite", "impolite")
    assert "No single word or phrase moves this text that much" in whole
    past_the_explained = highlight_html(text + " me", _effects(text, [0.0] * 4), "p", "n")
    assert "Only the first 4 words are explained." in past_the_explained


def test_highlight_colours_a_phrase_as_one_when_its_words_pass_the_floor_only_together() -> None:
    """A confident text whose politeness is spread over words each under the floor showed nothing; a part
    of the partition whose words push one way and together pass the floor is coloured as one mark, its
    tooltip giving the joint strength and each word's, and the legend says what such a mark means."""
    text = "please could you kindly help"
    out = highlight_html(text, _effects(text, [0.4, 0.3, -0.5, 2.0, 1.6]), "polite", "impolite")
    shown, legend = out.split("</div>")[:2]
    assert 'title="+3.6× a filler word together (+2.0, +1.6): towards polite"' in shown
    assert shown.count("rgba(59,125,216,") == 1 and ">kindly help</span>" in shown
    assert shown.count("too small to matter") == 3  # "please", "could", "you": each alone, uncoloured
    assert "A phrase coloured as one moves the text that much only together" in legend
    assert "No single word or phrase" not in legend
    # Words pushing opposite ways are never one phrase, whatever their sum.
    mixed = highlight_html(text, _effects(text, [0.4, 0.3, -0.5, 2.9, -0.1]), "polite", "impolite")
    assert "rgba(" not in mixed.split("</div>")[0]


def test_share_url() -> None:
    url = share_url("http://localhost:8501/demo?old=1", "local.tone", "hi & bye")
    assert url == "http://localhost:8501/demo?model=local.tone&text=hi+%26+bye"
    assert share_url(None, "a.b", "x") == "?model=a.b&text=x"


def test_trait_edits_only_changed_fields() -> None:
    before = pd.DataFrame(
        [
            {"key": "a", "name": "A", "positive_label": "p", "description": ""},
            {"key": "b", "name": "B", "positive_label": "q", "description": None},
        ]
    )
    after = before.copy()
    after.loc[0, "name"] = " Alpha "
    after.loc[1, "description"] = None  # unchanged: None and "" are both empty
    edits = trait_edits(before, after, ["name", "positive_label", "description"])
    assert edits == {"a": {"name": "Alpha"}}


def test_trait_metrics_frame_says_how_each_trait_was_trained() -> None:
    metrics = {"traits": {"a": {"method": "zero_shot"}, "b": {"method": "prior"}, "c": {"roc_auc": 0.9}}}
    frame = trait_metrics_frame(metrics)
    assert list(frame["method"]) == ["zero-shot (pole labels only)", "samples + label prior", "samples"]


def test_an_out_of_fold_roc_auc_on_few_samples_is_called_uncertain() -> None:
    """A trait whose ROC-AUC has a standard error above 0.05 is named with its two-SE margin; firm figures,
    zero-shot traits and versions from before the standard error was recorded raise no warning."""
    metrics = {
        "traits": {
            "few": {"roc_auc": 0.74, "roc_auc_se": 0.1},
            "many": {"roc_auc": 0.91, "roc_auc_se": 0.02},
            "zero": {"roc_auc": None, "roc_auc_se": None},
            "older": {"roc_auc": 0.8},
        }
    }
    said = uncertain_roc_auc(metrics)
    assert said is not None and said.startswith("Uncertain ROC AUC: few 0.74 ± 0.20 (two standard errors).")
    assert "many" not in said and "older" not in said
    assert uncertain_roc_auc({"traits": {"many": metrics["traits"]["many"]}}) is None
    assert uncertain_roc_auc({}) is None


def test_unknown_trait_rejection_lists_the_valid_keys(client: Client, draft: str) -> None:
    rows = [{"trait": "no_such_trait", "text": "hello", "quality": 1.0}]
    report = client.import_samples(draft, rows, strict=False)
    (error,) = report.errors
    hint = unknown_trait_hint(error.message, ["formality", "sentiment"])
    assert hint == " (this model's trait keys: formality, sentiment)", error.message
    assert unknown_trait_hint("quality: must be at most 1", ["formality"]) == ""


def test_grid_save_keeps_refused_rows_with_their_grid_position(client: Client, draft: str) -> None:
    payload = [
        {
            "trait": "formality",
            "text": "Yours faithfully, the committee.",
            "quality": 1.0,
            "source_url": None,
        },
        {"trait": "formality", "text": "", "quality": 1.0, "source_url": None},  # refused: empty text
        {"trait": "formality", "text": "sup dude", "quality": 0.0, "source_url": None},
    ]
    report = client.import_samples(draft, payload, strict=False)
    assert report.stored == 2
    (kept,) = refused_rows(payload, report.errors, first_row=24)  # 24 stored rows shown above the new ones
    assert kept["text"] == "" and kept["provenance"] == "not saved"
    assert kept["problem"].startswith("grid row 26: ")  # the second new row, under 24 stored ones


def test_label_wording_says_what_a_teams_model_does_with_a_label() -> None:
    """A team's model pauses automatic retraining and reviews annotators' labels: nothing the pages say
    before or after a label promises a retraining, and an annotator's label is named a proposal."""
    from app.labelling.campaign import where_it_went
    from app.labelling.labels import labelling_note, review_note
    from core.client import Model, PoolLabel

    team = Model(handle="acme.tone", state="ready", version_no=1, auto_retrain=False, review=True)
    note = labelling_note(team, 20)
    assert note is not None and "paused" in note and "retrains it" not in note
    out = PoolLabel(handle="acme.tone", pool_id=1, trait="tone", quality=1.0, stored_as="feedback", id=7,
                    version_no=2, state="ready", buffered_feedback=3)  # fmt: skip
    said = where_it_went(out, 20, auto=False, proposal=True)
    assert "retrains the model automatically" not in said and "paused" in said
    assert "It is a proposal: it trains once a reviewer accepts it." in said
    assert "a proposal" in (review_note(team, reviewer=False) or "")
    assert review_note(team, reviewer=True) is None  # a reviewer's own labels are accepted as given
    alone = Model(handle="acme.solo", state="ready", version_no=1)  # one person's: retrains, no review
    assert "retrains it" in (labelling_note(alone, 20) or "") and review_note(alone, reviewer=False) is None


def _failed_reads() -> None:
    """A page whose reads failed: the service timed out, was busy, refused; one read in a form."""
    import streamlit as st

    from app.ui.widgets import guard, show_error
    from core.client.errors import ApiError, TransportError

    calls = st.session_state.setdefault("calls", [])
    with guard("Reading the pool", retry=True):
        raise TransportError("POST …/pool/suggest: ReadTimeout: timed out (after 4 attempts)")
    with guard("Reading the pool", retry=True):  # the same read failing twice in a run: one button
        raise TransportError("timed out")
    busy = ApiError(503, "database_busy", "busy", retryable=True)
    show_error(busy, "Reading votes", retry=lambda: calls.append("asked again"))
    with guard("Listing traits", retry=True):  # the same call would be refused again: nothing to try
        raise ApiError(422, "validation_error", "bad")
    with guard("Saving the role"):  # an action: its own button is the one to press again
        raise TransportError("timed out")
    with st.form("f"), guard("Reading in a form", retry=True):  # a form takes no other button
        raise TransportError("timed out")
        st.form_submit_button("Save")


def test_a_failed_read_that_may_pass_is_offered_again_with_one_button() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_failed_reads)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 6 and all("Traceback" not in e.value for e in at.error)
    assert [b.key for b in at.button] == ["retry_Reading the pool", "retry_Reading votes"]
    assert {b.label for b in at.button} == {"Try again"}
    at.button(key="retry_Reading votes").click().run()
    assert at.session_state["calls"] == ["asked again"]


def _message_stopped_at_its_drawing() -> None:
    """A press whose run a newer request stops as it draws the press's message (Streamlit stops a run at its
    next element, before sending it): here the run asks for the rerun itself at that moment."""
    import streamlit as st

    from app.ui.flash import say_once

    def withdraw() -> None:
        st.session_state["flash"] = "Withdrew your label #12."

    st.button("Withdraw", on_click=withdraw)

    def drawn_after_a_newer_request(said: str) -> None:
        if not st.session_state.get("stopped"):
            st.session_state["stopped"] = True
            st.rerun()
        st.success(said)

    say_once("flash", drawn_after_a_newer_request)


def test_a_message_stopped_at_its_drawing_is_shown_by_the_next_run_once() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_message_stopped_at_its_drawing)
    at.run()
    at.button[0].click().run()
    assert [s.value for s in at.success] == ["Withdrew your label #12."]
    at.run()
    assert not at.success
