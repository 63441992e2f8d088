"""The owner's campaign settings on the Team page: votes wanted per text, overlap, automatic retraining
(paused or not), blind labelling (docs/api.md, "Claims and votes wanted"), and review: whether annotators'
labels wait for a reviewer and what else accepts them (docs/api.md, "Review"). Only an owner of the
namespace sees the controls; everyone else sees the settings as a line of text, never a button the service
would refuse."""

from __future__ import annotations

import streamlit as st

from app.shell.backend import Backend
from app.ui.flash import say_once
from app.ui.widgets import guard
from core.client import Model
from core.contract import ACCEPT_RULES, MAX_OVERLAP, MAX_VOTES_WANTED

FLASH = "campaign_flash"
#: Each accept rule in words (core.contract.ACCEPT_RULES).
RULE_WORDS = {"none": "a reviewer only", "agreement": "a reviewer, or the votes wanted agreeing"}


def settings_line(model: Model) -> str:
    """The campaign's settings in words, for everyone."""
    votes = "1 vote per text" if model.votes_wanted == 1 else f"{model.votes_wanted:d} votes per text"
    retraining = "automatic retraining on" if model.auto_retrain else "automatic retraining **paused**"
    blind = "blind labelling" if model.blind_labelling else "votes visible to colleagues"
    overlap = f"{model.overlap:.0%} of suggestions shared with colleagues" if model.overlap else "no overlap"
    review = f"labels reviewed (accepted by {RULE_WORDS[model.accept_rule]})" if model.review else "no review"
    return f"{votes} · {overlap} · {retraining} · {blind} · {review}"


def campaign_settings(backend: Backend, model: Model) -> None:
    """The section: the owner's form, or the settings as text."""
    st.subheader("Labelling campaign")
    say_once(FLASH)
    if not backend.may("manage"):
        st.caption(f":material/tune: {settings_line(model)} (set by the namespace's owners).")
        return
    with st.form("campaign_settings"):
        votes = st.number_input(
            "Votes wanted per text",
            min_value=1,
            max_value=MAX_VOTES_WANTED,
            value=model.votes_wanted,
            key="campaign_votes_wanted",
            help="How many people label each pool text before it leaves everyone's suggestions; more than 1 "
            "measures the team's agreement on every text.",
        )
        overlap = st.slider(
            "Overlap with colleagues",
            0,
            int(MAX_OVERLAP * 100),
            value=round(model.overlap * 100),
            step=5,
            format="%d%%",
            key="campaign_overlap",
            help="This share of everyone's suggestions are texts a colleague labelled and they have not: the "
            "team's agreement (Traits page) is measured on them as it works. With more than 1 vote wanted, "
            "texts still wanting votes come first anyway.",
        )
        retrain = st.toggle(
            "Automatic retraining",
            value=model.auto_retrain,
            key="campaign_auto_retrain",
            help="Off (a team's model starts so): labels given on a trained model wait in the buffer and no "
            "automatic version is made until it is on again. On: a full buffer retrains, and the version is "
            "kept only if it is no worse than the serving one on the evaluation set.",
        )
        blind = st.toggle(
            "Blind labelling",
            value=model.blind_labelling,
            key="campaign_blind",
            help="On: an annotator sees colleagues' votes and comments on a text only once they voted on it.",
        )
        review = st.toggle(
            "Review annotators' labels",
            value=model.review,
            key="campaign_review",
            help="On (a team's model starts so): an annotator's label is a proposal that trains only once "
            "accepted; reviewers decide on the Review section below. Off: every label trains as it is given.",
        )
        rule = st.radio(
            "Who accepts a label",
            ACCEPT_RULES,
            index=ACCEPT_RULES.index(model.accept_rule) if model.accept_rule in ACCEPT_RULES else 0,
            format_func=RULE_WORDS.__getitem__,
            horizontal=True,
            key="campaign_accept_rule",
            help="With review on. The votes wanted agreeing: once a text has votes from that many people "
            "(at least 2), none rejected and all on one pole, its pending votes are accepted.",
        )
        if st.form_submit_button("Save campaign settings", type="primary"):
            with guard("Saving the campaign settings"):
                saved = backend.client.update_model(
                    model.handle,
                    votes_wanted=int(votes),
                    overlap=overlap / 100,
                    auto_retrain=retrain,
                    blind_labelling=blind,
                    review=review,
                    accept_rule=rule,
                )
                st.session_state[FLASH] = f"Saved: {settings_line(saved)}."
                st.rerun()
