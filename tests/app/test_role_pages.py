"""The workbench offers what the key's role may do (app/shell/roles.py), driven with AppTest against the real
local service: an annotator labels but neither settles, imports, trains nor changes traits or models, each
with the reason in a caption; a reviewer settles, and learns who settled a text first when a colleague did."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.ui.inert import JOINER
from core.client import Client
from core.local import LocalService
from tests.support.app import CASUAL, FORMAL, FORMALITY, named_key, new_handle, new_key_name
from tests.support.apptest import card_of, no_exception, page, run_label_page, shown, texts

TEXTS = FORMAL[:4] + CASUAL[:4]


@pytest.fixture
def people(local_service: LocalService) -> dict[str, str]:
    """An owner, an annotator and two reviewers of the service's namespace (names unique in the session)."""
    roles = {"own": "owner", "ann": "annotator", "rev": "reviewer", "rex": "reviewer"}
    return {
        name: named_key(local_service.data_dir, local_service.namespace, new_key_name(name), role=role)
        for name, role in roles.items()
    }


def disputed(local_service: LocalService, people: dict[str, str]) -> str:
    """A draft whose 8 texts the owner and the annotator labelled on opposite poles, with a pool."""
    handle = new_handle(local_service, "roles")
    with Client(local_service.url, people["own"]) as owner:
        owner.create_model(handle)
        owner.add_traits(handle, [FORMALITY])
        owner.add_pool_texts(handle, [f"Pool text {i} about the weather." for i in range(12)])
        owner.add_samples(handle, [{"trait": "formality", "text": t, "quality": 1.0} for t in TEXTS])
    with Client(local_service.url, people["ann"]) as ann:
        ann.add_samples(handle, [{"trait": "formality", "text": t, "quality": 0.0} for t in TEXTS])
    return handle


def _as(monkeypatch: pytest.MonkeyPatch, local_service: LocalService, key: str) -> None:
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


def captions(at: object) -> str:
    return " ".join(shown(at.caption))  # type: ignore[attr-defined]


def test_an_annotator_labels_and_is_told_why_the_rest_is_not_offered(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = disputed(local_service, people)
    _as(monkeypatch, local_service, people["ann"])
    at = page("samples", handle)
    at.run()
    no_exception(at)
    said = captions(at)
    assert not [b for b in at.button if b.label.startswith("Settle: ")]
    assert "Settling a text needs the reviewer role; your key is an annotator." in said
    assert (
        "Importing a file needs the owner role" in said
        and "Synthesizing samples needs the owner role" in said
    )
    assert at.button(key="synth_go").disabled
    assert "Add one sample" in " ".join(texts(at.markdown))  # labelling is the annotator's
    label = page("label", handle)
    run_label_page(label)
    no_exception(label)
    assert "Importing or emptying the pool needs the owner role" in captions(label)
    assert not [b for b in label.button if b.label == "Empty the pool"]
    assert label.session_state["label_session"].current is not None  # suggestions to label
    traits = page("traits", handle)
    traits.run()
    no_exception(traits)
    assert "Editing traits (add, change, delete, discover) needs the owner role" in captions(traits)
    assert not [b for b in traits.button if b.label in ("Add trait", "Discover traits")]
    training = page("training", handle)
    training.run()
    no_exception(training)
    assert "Training needs the owner role" in captions(training) and training.button(key="train_go").disabled
    models = page("models", handle)  # creating a model is an owner's: no Create tab to open at all
    models.run()
    no_exception(models)
    assert [t.label for t in models.tabs] == ["Browse", "Edit selected"]
    assert not [b for b in models.button if b.label == "Create model"]


def test_a_reviewer_settles_and_hears_who_settled_first(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = disputed(local_service, people)
    _as(monkeypatch, local_service, people["rev"])
    at = page("samples", handle)
    at.run()
    no_exception(at)
    settle = [b for b in at.button if b.label.startswith("Settle: ")]
    assert settle and "needs the reviewer role" not in captions(at)
    quoted = next(m.value for m in at.markdown if m.value.startswith("> "))[2:]
    first_text = re.sub(r"\\(.)", r"\1", quoted).replace(JOINER, "")  # the page shows it escaped, as typed
    with Client(local_service.url, people["rex"]) as rex:  # a colleague settles it while the page is open
        rex.add_samples(
            handle, [{"trait": "formality", "text": first_text, "quality": 0.0, "adjudicated": True}]
        )
        rex_name = rex.current_key().name
    settle[1].click()
    at.run()
    no_exception(at)
    # The loser is told in the card of the text they pressed on, where the button was (not at the page's
    # top, out of view), and that card now says who settled it.
    card = card_of(at, quoted)
    warned = " ".join(shown(e for e in card if e.type == "warning"))
    assert f"Not settled: This text of trait 'formality' was settled already, by {rex_name} at" in warned
    assert f":material/gavel: Settled by {rex_name}." in shown(e for e in card if e.type == "caption")
    assert not [b for b in at.button if (b.key or "").startswith("disagree_settle_0_")]
    with Client(local_service.url, people["own"]) as owner:
        settled = [s for s in owner.list_samples(handle) if s.adjudicated]
        assert [(s.text, s.annotator) for s in settled] == [(first_text, rex_name)]
        owner.train(handle, effort="low")
        owner.wait(handle)
    # On the trained model the reviewer settles the next text, no reopen; a settled text says who settled
    # it and offers no Settle button.
    at = page("samples", handle)
    at.run()
    no_exception(at)
    assert f"Settled by {rex_name}." in captions(at)
    settle = [b for b in at.button if b.label.startswith("Settle: ")]
    assert len(settle) == 2 * (len(TEXTS) - 1)
    settle[0].click()
    at.run()
    no_exception(at)
    assert any("your vote decides its pole" in t for t in texts(at.success))
    assert len([b for b in at.button if b.label.startswith("Settle: ")]) == 2 * (len(TEXTS) - 2)


def test_only_an_owner_sees_the_campaign_controls_on_the_team_page(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Votes wanted, overlap, automatic retraining, blind labelling, review and its accept rule are the
    owner's, on the Team page; an annotator sees no control for them (not even a disabled one) on the Team or
    the Label page, only the settings in words."""
    handle = disputed(local_service, people)
    _as(monkeypatch, local_service, people["ann"])
    label = page("label", handle)
    run_label_page(label)
    no_exception(label)
    assert not [b for b in label.button if "retraining" in b.label.lower()] and not label.slider
    team = page("team", handle)
    team.run()
    no_exception(team)
    assert not team.toggle and not team.number_input and not team.slider
    assert [r.key for r in team.radio] == ["team_export_format"]  # an export, not the accept rule
    # A team's model: automatic retraining is off until its owner turns it on, and review is on.
    line = "1 vote per text · no overlap · automatic retraining **paused** · votes visible to colleagues"
    assert f"{line} · labels reviewed (accepted by a reviewer only)" in captions(team)

    _as(monkeypatch, local_service, people["own"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    team.number_input(key="campaign_votes_wanted").set_value(3)
    team.slider(key="campaign_overlap").set_value(30)
    team.toggle(key="campaign_auto_retrain").set_value(False)
    team.toggle(key="campaign_blind").set_value(True)
    assert team.toggle(key="campaign_review").value is True
    team.radio(key="campaign_accept_rule").set_value("agreement")
    next(b for b in team.button if b.label == "Save campaign settings").click().run()
    no_exception(team)
    with Client(local_service.url, people["own"]) as owner:
        model = owner.get_model(handle)
    assert (model.votes_wanted, model.overlap, model.auto_retrain, model.blind_labelling) == (
        3,
        0.3,
        False,
        True,
    )
    assert (model.review, model.accept_rule) == (True, "agreement")
    saved = "Saved: 3 votes per text · 30% of suggestions shared with colleagues · automatic retraining"
    rule = "labels reviewed (accepted by a reviewer, or the votes wanted agreeing)"
    assert f"{saved} **paused** · blind labelling · {rule}." in texts(team.success)
    team.toggle(key="campaign_review").set_value(False)
    next(b for b in team.button if b.label == "Save campaign settings").click().run()
    no_exception(team)
    with Client(local_service.url, people["own"]) as owner:
        assert owner.get_model(handle).review is False
    assert any(t.endswith("· no review.") for t in texts(team.success))
    # With 3 votes wanted, the Label page's count says what it counts: texts short of 3 votes.
    _as(monkeypatch, local_service, people["ann"])
    label = page("label", handle)
    run_label_page(label)
    no_exception(label)
    assert [m.label for m in label.metric] == ["Texts wanting 3 votes for Formality"]
    assert "Overlap with colleagues: 30% of suggestions" in captions(label) and not label.slider
    # A label need not lower that count, so no "-1 this session" stands beside it: the caption says it.
    label.button(key="label_btn_1").click().run()
    no_exception(label)
    assert not label.metric[0].delta
    assert "1 labelled this session" in captions(label)


def test_a_person_is_told_their_role_without_a_key() -> None:
    """Someone signed in through the identity provider has no key: the reason names them, not a key."""
    from datetime import UTC, datetime

    from app.shell.roles import refusal
    from core.client import KeyInfo

    common: dict[str, Any] = {"scope": "authoring", "namespaces": ["acme"], "created_at": datetime.now(UTC)}
    person = KeyInfo(prefix="", kind="person", role="annotator", roles={"acme": "annotator"}, **common)
    key = KeyInfo(prefix="abc", role="annotator", **common)
    assert refusal(person, "review", "Settling a text") == (
        "Settling a text needs the reviewer role; you are an annotator."
    )
    assert refusal(key, "review", "Settling a text") == (
        "Settling a text needs the reviewer role; your key is an annotator."
    )


def test_a_reviewer_decides_an_annotators_labels_on_the_team_page(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team's model: the annotator's 8 votes wait for review. She sees no decision to make; a reviewer
    rejects two with a comment and accepts the rest in bulk; she then reads the comment, and the table of
    people shows her acceptance rate."""
    handle = disputed(local_service, people)
    _as(monkeypatch, local_service, people["ann"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    assert not [b for b in team.button if b.label in ("Accept picked", "Reject picked")]

    _as(monkeypatch, local_service, people["rev"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    assert "8 label(s) wait for review" in captions(team)
    with Client(local_service.url, people["own"]) as owner:
        first_two = [f"{r.kind}:{r.id}" for r in list(owner.list_review(handle))[:2]]
    # One form: the picks and the comment go with the press.
    team.multiselect(key="review_pick").set_value(first_two)
    team.text_input(key="review_comment").input("these are formal")
    team.button(key="review_reject").click().run()
    no_exception(team)
    assert "2 label(s): rejected." in texts(team.success)
    # The picks and the comment were for those two: nothing of them stays for the next decision.
    assert team.multiselect(key="review_pick").value == []
    assert team.text_input(key="review_comment").value == ""
    team.checkbox(key="review_all").check()
    team.button(key="review_accept").click().run()
    no_exception(team)
    assert "6 label(s): accepted." in texts(team.success)
    with Client(local_service.url, people["own"]) as owner:
        assert list(owner.list_review(handle)) == []
        rejected = list(owner.list_review(handle, "rejected"))
    assert [(r.text, r.comment) for r in rejected] == [(t, "these are formal") for t in TEXTS[:2]]

    _as(monkeypatch, local_service, people["ann"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    people_table = team.dataframe[-2].value
    assert list(people_table["acceptance"]) == ["75%"]
    assert list(team.dataframe[-1].value["comment"]) == ["these are formal"] * 2


def test_an_owner_removes_a_persons_labels_on_the_team_page_and_undoes_it(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = disputed(local_service, people)
    with Client(local_service.url, people["ann"]) as ann:
        ann_name = ann.current_key().name
    _as(monkeypatch, local_service, people["own"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    team.selectbox(key="review_remove_who").set_value(ann_name)
    team.button(key="review_remove").click().run()
    no_exception(team)
    assert f"Removed 8 label(s) of {ann_name}." in texts(team.success)
    with Client(local_service.url, people["own"]) as owner:
        assert ann_name not in {s.annotator for s in owner.list_samples(handle)}
    team.button(key="review_restore").click().run()
    no_exception(team)
    assert "Brought back 8 label(s)." in texts(team.success)
    with Client(local_service.url, people["own"]) as owner:
        assert sum(s.annotator == ann_name for s in owner.list_samples(handle)) == 8
