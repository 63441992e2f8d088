"""A team's workbench driven with AppTest against the real local service: team mode's sign-in (each session
its own key, the environment's key never used), who you are in the sidebar, the agreement on the Traits page,
the Samples page's Disagreements tab (settling a text), the Label page's overlap, the human ceiling."""

from __future__ import annotations

import itertools
import re

import pytest

from app.ui.inert import JOINER, escape_md
from core.client import Client
from core.local import LocalService
from tests.support.app import CASUAL, FORMAL, FORMALITY, named_key, new_handle, new_key_name
from tests.support.apptest import by_label, card_of, main_app, no_exception, page, run_label_page, texts

TEXTS = FORMAL[:8] + CASUAL[:8]
# The evaluation set's texts, which the model did not train on (an evaluation leaves those out).
HELD_OUT = [f"Quoted again: {t}" for t in TEXTS]
VOTES = {  # three annotators on 16 texts: mostly agreeing, some texts split
    "ann": [1, 1, 1, 1, 0.8, 1, 1, 0.2, 0, 0, 0, 0, 0.7, 0, 0, 0],
    "ben": [1, 1, 0.3, 1, 1, 1, 1, 1, 0, 0.9, 0, 0, 0, 0, 0.1, 0],
    "cy": [1, 0.6, 1, 1, 1, 0.4, 1, 1, 0, 0, 0, 0.6, 0, 0, 0, 0],
}


@pytest.fixture
def team(local_service: LocalService) -> dict[str, str]:
    """Three named keys of the service's namespace (names unique within the test session)."""
    return {
        name: named_key(local_service.data_dir, local_service.namespace, new_key_name(name)) for name in VOTES
    }


def labelled(local_service: LocalService, team: dict[str, str], *, train: bool = False) -> str:
    """A draft whose 16 texts three annotators labelled (each with their own key, through the API)."""
    handle = new_handle(local_service, "team")
    with Client(local_service.url, team["ann"]) as owner:
        owner.create_model(handle)
        owner.add_traits(handle, [FORMALITY])
    for name, qualities in VOTES.items():
        with Client(local_service.url, team[name]) as c:
            c.add_samples(
                handle,
                [
                    {"trait": "formality", "text": t, "quality": q}
                    for t, q in zip(TEXTS, qualities, strict=True)
                ],
            )
    if train:
        with Client(local_service.url, team["ann"]) as owner:
            owner.wait(handle, owner.train(handle, "low").run_id, timeout=120)
    return handle


def test_team_mode_signs_each_session_in_with_its_own_key(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORING_TEAM", "1")
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", local_service.api_key)  # a shared key: team mode must never use it
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")
    at = main_app()
    at.run()
    no_exception(at)
    assert [t.value for t in at.title] == ["Sign in"]
    assert "model_picker" not in at.session_state  # nothing of the service shown before signing in
    by_label(at.text_input, "Your API key").set_value("sk_000000000000_" + "x" * 40)
    by_label(at.button, "Sign in").click()
    at.run()
    assert [t.value for t in at.title] == ["Sign in"]
    assert "not valid" in " ".join(texts(at.error))
    by_label(at.text_input, "Your API key").set_value(team["ben"])
    by_label(at.button, "Sign in").click()
    at.run()
    no_exception(at)
    assert "Signed in as **ben" in " ".join(texts(at.sidebar.caption))
    assert at.session_state["remote_backend"]["key"] == team["ben"]

    other = main_app()  # another browser: not signed in, whatever the first one did
    other.run()
    assert [t.value for t in other.title] == ["Sign in"]

    at.session_state["label_session"] = "ben's queue, last label and undo"  # as the Label page keeps them
    by_label(at.sidebar.button, "Sign out").click()
    at.run()
    assert [t.value for t in at.title] == ["Sign in"]
    assert "remote_backend" not in at.session_state
    assert "label_session" not in at.session_state  # signing out forgets everything of ben in the tab
    by_label(at.text_input, "Your API key").set_value(team["cy"])
    by_label(at.button, "Sign in").click()
    at.run()
    no_exception(at)
    assert "Signed in as **cy" in " ".join(texts(at.sidebar.caption))
    assert "label_session" not in at.session_state


@pytest.mark.usefixtures("app_env")
def test_the_sidebar_says_who_labels(local_service: LocalService) -> None:
    at = main_app()
    at.run()
    no_exception(at)
    with local_service.client() as c:
        name = c.current_key().name
    assert f"Labelling as **{escape_md(str(name))}**" in " ".join(texts(at.sidebar.caption))


def _as(monkeypatch: pytest.MonkeyPatch, local_service: LocalService, key: str) -> None:
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


def test_traits_page_shows_the_agreement(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = labelled(local_service, team)
    _as(monkeypatch, local_service, team["ann"])
    at = page("traits", handle)
    at.run()
    no_exception(at)
    assert "Agreement between annotators" in [s.value for s in at.subheader]
    table = next(d.value for d in at.dataframe if "texts with 2+ votes" in d.value.columns)
    row = table.iloc[0]
    assert row["texts with 2+ votes"] == 16
    with Client(local_service.url, team["ann"]) as c:
        alpha = c.agreement(handle).traits["formality"].krippendorff_alpha_interval
    assert row["α on quality"] == f"{alpha:.2f}"
    assert all(f"{name}" in row["annotators"] for name in ("ann", "ben", "cy"))


def test_disagreements_tab_settles_a_text(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = labelled(local_service, team)
    _as(monkeypatch, local_service, team["ben"])
    at = page("samples", handle)
    at.run()
    no_exception(at)
    markdown = " ".join(texts(at.markdown))
    assert "contested" in markdown
    # The votes are graded (0.8, 0.3, …): each text may be settled on a pole or in the middle.
    assert [b.label for b in at.button if (b.key or "").startswith("disagree_settle_0_")] == [
        "Settle: casual",
        "Settle: neither pole \\(the middle\\)",
        "Settle: formal",
    ]
    shown = next(m.value for m in at.markdown if m.value.startswith("> "))[2:]  # as typed, escaped
    at.button(key="disagree_settle_0_1").click()  # the first text, settled on the positive pole
    at.run()
    no_exception(at)
    with Client(local_service.url, team["ben"]) as c:
        name = c.current_key().name or ""
        mine = [s for s in c.list_samples(handle) if s.adjudicated]
        assert [(escape_md(s.text), s.quality, s.annotator) for s in mine] == [(shown, 1.0, name)]
        settled = [d for d in c.agreement(handle).traits["formality"].disagreed if d.adjudicated]
        assert [escape_md(d.text) for d in settled] == [shown]
    # Said in the settled text's card, where the reviewer pressed; the card shows every vote, ben's own
    # from before he settled it too.
    card = card_of(at, shown)
    assert any(e.type == "success" and "your vote decides its pole" in e.value for e in card)
    first = TEXTS.index(re.sub(r"\\(.)", r"\1", shown).replace(JOINER, ""))
    votes = next(str(e.value) for e in card if e.type == "caption" and str(e.value).startswith("Votes: "))
    earlier = VOTES["ben"][first]
    before = f"{escape_md(name)}: {escape_md(f'{earlier:.2f}')} (before settling)"
    assert before in votes and f"{escape_md(name)}: 1\\.00 (settles)" in votes, votes
    assert "settled" in " ".join(texts(at.markdown))


def test_disagreements_on_a_trained_model_settle_without_reopening(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settling is a reviewer's act on a trained model too: no reopen asked, the next training takes it in,
    and the settled text names its settler and offers no more Settle buttons."""
    handle = labelled(local_service, team, train=True)
    _as(monkeypatch, local_service, team["cy"])
    at = page("samples", handle)
    at.run()
    no_exception(at)
    assert "reopen the model" not in " ".join(texts(at.caption))
    settle = [b for b in at.button if b.label.startswith("Settle: ")]
    first = [b for b in settle if (b.key or "").startswith("disagree_settle_0_")]
    assert len(first) >= 2
    at.button(key="disagree_settle_0_1").click()
    at.run()
    no_exception(at)
    with Client(local_service.url, team["cy"]) as c:
        name = c.current_key().name
        settled = [d for d in c.agreement(handle).traits["formality"].disagreed if d.adjudicated]
    assert len(settled) == 1
    assert len([b for b in at.button if b.label.startswith("Settle: ")]) == len(settle) - len(first)
    assert f"Settled by {name}" in " ".join(texts([*at.markdown, *at.caption]))


def test_label_page_routes_overlap_to_colleagues_texts(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = new_handle(local_service, "overlap")
    things = ["parcel", "letter", "invoice", "report", "courier", "visitor"]
    days = ["Monday", "Tuesday", "Friday", "noon", "time"]
    pool = [f"Note {i}: the {w} arrives on {d}." for i, (w, d) in enumerate(itertools.product(things, days))]
    with Client(local_service.url, team["ann"]) as ann:
        ann.create_model(handle)
        ann.add_traits(handle, [FORMALITY])
        ann.add_pool_texts(handle, pool)
        ann.add_samples(
            handle,
            [{"trait": "formality", "text": t, "quality": float(i % 2)} for i, t in enumerate(pool[:8])],
        )
        ann.update_model(handle, overlap=0.2)  # the campaign's, which the owner sets on the Team page
    _as(monkeypatch, local_service, team["ben"])
    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    assert not at.slider  # the page asks for no overlap of its own: the suggestions use the model's
    session = at.session_state["label_session"]
    assert session.overlap is None
    shared = [item for item in session.queue if item["overlap"]]
    assert len(shared) == 4 and {item["text"] for item in shared} <= set(pool[:8])  # 20 % of 20


def test_versions_page_shows_the_share_of_the_human_ceiling(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = labelled(local_service, team, train=True)
    for name, qualities in VOTES.items():
        with Client(local_service.url, team[name]) as c:
            c.add_evaluation_items(
                handle,
                [
                    {"trait": "formality", "text": t, "quality": q}
                    for t, q in zip(HELD_OUT, qualities, strict=True)
                ],
            )
    with Client(local_service.url, team["ann"]) as c:
        c.wait(handle, c.evaluate(handle, 1).run_id, timeout=120)
        share = c.get_evaluation(handle, 1).traits["formality"].share_of_ceiling
    assert share is not None
    _as(monkeypatch, local_service, team["ann"])
    at = page("versions", handle)
    at.run()
    no_exception(at)
    lines = " ".join(texts(at.markdown))
    assert f"v1 reaches {share.value:.0%}" in lines and "of the human ceiling" in lines


def test_two_label_pages_get_disjoint_texts_and_say_where_each_label_went(
    local_service: LocalService, team: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = new_handle(local_service, "campaign")
    pool = [f"Campaign note {i}: the {w} arrives on {d}." for i, (w, d) in enumerate(itertools.product(
        ["parcel", "letter", "invoice", "report", "courier", "visitor", "crate"], ["Monday", "Friday", "noon"]
    ))]  # fmt: skip
    with Client(local_service.url, team["ann"]) as ann:
        ann.create_model(handle)
        ann.add_traits(handle, [FORMALITY])
        ann.add_samples(handle, [{"trait": "formality", "text": t, "quality": float(i % 2)}
                                 for i, t in enumerate(TEXTS)])  # fmt: skip
        ann.add_pool_texts(handle, pool)
    pages = {}
    for name in ("ann", "ben"):
        _as(monkeypatch, local_service, team[name])
        pages[name] = page("label", handle)
        run_label_page(pages[name])
        no_exception(pages[name])
    queues = {name: {i["id"] for i in at.session_state["label_session"].queue} for name, at in pages.items()}
    assert queues["ann"] and queues["ben"] and not queues["ann"] & queues["ben"]  # claimed: no collision
    _as(monkeypatch, local_service, team["ann"])
    at = pages["ann"]
    assert "labels are samples of the draft, for v1" in " ".join(texts(at.markdown))
    at.button(key="label_btn_2").click()
    at.run()
    assert "Saved to the draft: its next training makes v1." in " ".join(texts(at.caption))
    with Client(local_service.url, team["ann"]) as ann:  # the owner trains; ann's page was read before
        ann.wait(handle, ann.train(handle, "low").run_id, timeout=120)
    at.button(key="label_btn_1").click()
    at.run()
    no_exception(at)
    assert "buffered for the next version v2" in " ".join(texts(at.caption))
    assert not at.error


def test_the_team_page_adds_changes_and_removes_people(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An owner (here the service's owner key, signed in on a team's workbench) manages who is in the
    namespace through the client; the service refuses what it must and the page says so."""
    monkeypatch.setenv("SCORING_TEAM", "1")
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")
    email = f"{new_key_name('dee')}@example.com"
    at = page("team")
    at.session_state["remote_backend"] = {"url": local_service.url, "key": local_service.api_key}
    at.run()
    no_exception(at)
    assert [t.value for t in at.title] == ["Team"]
    by_label(at.text_input, "Email").set_value(email.upper())
    by_label(at.selectbox, "Role").set_value("reviewer")
    by_label(at.button, "Save").click()
    at.run()
    no_exception(at)
    assert f"{escape_md(email)} is now reviewer" in " ".join(texts(at.success))
    table = at.dataframe[0].value
    assert {"Member": email, "Role": "reviewer", "Signed in": "not yet"}.items() <= dict(
        table[table["Member"] == email].iloc[0]
    ).items()
    by_label(at.selectbox, "Member").set_value(email)
    by_label(at.button, "Remove").click()
    at.run()
    no_exception(at)
    assert f"{escape_md(email)} was removed" in " ".join(texts(at.success))
    with Client(local_service.url, local_service.api_key) as c:
        assert email not in [m.member for m in c.list_people(local_service.namespace)]
