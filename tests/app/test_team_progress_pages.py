"""The Label page's guidelines and `?` (unsure) key, and the Team progress section with the reviewer's notes,
driven with AppTest against the real local service: the table's numbers are the API's."""

from __future__ import annotations

import pytest
from pandas.testing import assert_frame_equal

from app.team.gold import ITEM_COLUMNS, accuracy_frame, gold_frame
from app.team.progress import progress_frame
from app.ui.inert import escape_md, guidelines_md
from core.client import Client
from core.local import LocalService
from tests.support.app import CASUAL, FORMAL, named_key, new_handle, new_key_name
from tests.support.apptest import by_label, no_exception, page, run_label_page, texts

TEXTS = FORMAL[:3] + CASUAL[:3]
# Guidelines written in Markdown, with a tag a careless paste could bring.
GUIDE = (
    "**Formal**: what you would write to a stranger at work.\n\n- Slang or chat is *casual*.\n- <b>bold</b>"
)


@pytest.fixture
def people(local_service: LocalService) -> dict[str, str]:
    roles = {"own": "owner", "ann": "annotator", "rev": "reviewer"}
    return {
        name: named_key(local_service.data_dir, local_service.namespace, new_key_name(f"tp{name}"), role=role)
        for name, role in roles.items()
    }


def labelled(local_service: LocalService, people: dict[str, str]) -> str:
    """A draft with guidelines on its trait, a pool, and votes of the owner and the annotator that differ."""
    handle = new_handle(local_service, "progress")
    with Client(local_service.url, people["own"]) as owner:
        owner.create_model(handle)
        trait = {
            "name": "Formality",
            "positive_label": "formal",
            "negative_label": "casual",
            "description": GUIDE,
        }
        owner.add_traits(handle, [trait])
        owner.add_pool_texts(handle, [f"Pool text {i} about the weather." for i in range(12)])
        owner.add_samples(handle, [{"trait": "formality", "text": t, "quality": 1.0} for t in TEXTS])
    with Client(local_service.url, people["ann"]) as ann:
        ann.add_samples(handle, [{"trait": "formality", "text": t, "quality": 0.0} for t in TEXTS[:4]])
    return handle


def _as(monkeypatch: pytest.MonkeyPatch, local_service: LocalService, key: str) -> None:
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


def test_the_label_page_shows_the_guidelines_and_marks_a_text_unsure(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = labelled(local_service, people)
    _as(monkeypatch, local_service, people["ann"])
    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    assert guidelines_md(GUIDE) in texts(at.markdown)  # rendered as Markdown, its tag shown as typed
    assert "\\<b>bold\\</b>" in guidelines_md(GUIDE)  # escaped: no tag
    assert not any("Formal" in t for t in texts(at.text))  # no longer raw text
    assert "`?` unsure" in " ".join(texts(at.caption))
    session = at.session_state["label_session"]
    shown = session.current["text"]
    by_label(at.button, "? · unsure").click().run()
    no_exception(at)
    assert at.session_state["label_session"].current["text"] != shown  # moved on, as a skip does
    with Client(local_service.url, people["rev"]) as rev:
        marks = list(rev.list_unsure(handle, "formality"))
        assert [(m.text, m.annotator) for m in marks] == [(shown, session.annotator)]
        assert rev.agreement(handle).traits["formality"].annotators  # votes, unchanged by the mark
        assert all(v.unsure is False for v in rev.votes(handle) if v.kind == "sample")


def test_the_team_progress_table_is_the_api_s_and_reviewers_see_the_notes(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = labelled(local_service, people)
    with Client(local_service.url, people["ann"]) as ann:
        ann.mark_unsure(handle, "formality", TEXTS[0])
        ann.add_comment(handle, "formality", TEXTS[0], "Polite, but is it formal?")
    _as(monkeypatch, local_service, people["rev"])
    at = page("team", handle)
    at.run()
    no_exception(at)
    with Client(local_service.url, people["rev"]) as rev:
        expected = progress_frame(rev.team_progress(handle))
    table = [d for d in at.dataframe if list(d.value.columns) == list(expected.columns)]
    assert len(table) == 1
    shown = table[0].value.reset_index(drop=True)
    assert shown.to_dict("records") == expected.to_dict("records")
    assert len(shown) == 2  # the owner and the annotator
    # Figures as a person reads them, never the service's floats ("0.6666666666666666", "15.038465").
    for column, figure in (("agreement with others", r"\d+%"), ("median time per label", r"[\d,]+ s")):
        assert shown[column].str.fullmatch(f"({figure})?").all(), shown[column].tolist()
    assert by_label(at.button, "Prepare the vote export")
    assert any("Only an owner" in t for t in texts(at.info))  # a reviewer reads progress, not the people
    at = page("samples", handle)  # the notes sit beside each text of the Disagreements tab
    at.run()
    no_exception(at)
    captions = " ".join(texts(at.caption))
    assert (
        "Unsure: tpann" in captions and escape_md("Polite, but is it formal?") in captions
    )  # shown as typed


def test_the_gold_section_is_the_api_s_for_a_reviewer_and_absent_for_an_annotator(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gold at 50 %: the annotator labels what she is handed, answering every gold item wrong; the reviewer's
    Team page shows her accuracy as the API gives it, flagged, and lists the gold items (text, known answer,
    origin, answers); removing one takes its answers out of her accuracy. Her own Team page has no gold at
    all."""
    handle = labelled(local_service, people)
    gold = {f"Gold text {i}: kindly acknowledge receipt.": float(i % 2) for i in range(8)}
    with Client(local_service.url, people["own"]) as owner:
        owner.add_gold(handle, [{"trait": "formality", "text": t, "quality": q} for t, q in gold.items()])
        owner.update_model(handle, gold_rate=0.5)
    with Client(local_service.url, people["ann"]) as ann:
        for _ in range(3):  # 3 answers of up to 10 at 50 %: no gold at all about once in a billion
            for item in ann.suggest(handle, "formality", claim=True).items:
                wrong = 1.0 - gold[item.text] if item.text in gold else 1.0
                ann.label_pool_text(handle, item.id, "formality", wrong)
    _as(monkeypatch, local_service, people["rev"])
    at = page("team", handle)
    at.run()
    no_exception(at)
    with Client(local_service.url, people["rev"]) as rev:
        found = rev.gold_accuracy(handle)
    [person] = found.people
    assert person.answered > 0 and person.correct == 0 and person.flagged
    expected = accuracy_frame(found)
    [table] = [d for d in at.dataframe if list(d.value.columns) == list(expected.columns)]
    assert table.value.reset_index(drop=True).to_dict("records") == expected.to_dict("records")
    assert any(escape_md(person.annotator) in w and "Surely under 70%" in w for w in texts(at.warning))
    assert "Gold items" in texts(at.subheader)
    # The gold items themselves, with their known answers and how people answered each, as the API has them.
    with Client(local_service.url, people["rev"]) as rev:
        items = rev.gold(handle)
        traits = {t.key: t for t in rev.list_traits(handle)}
    expected = gold_frame(items, traits)
    [table] = [d for d in at.dataframe if list(d.value.columns) == ITEM_COLUMNS]
    assert_frame_equal(table.value.reset_index(drop=True), expected)  # an item nobody answered: NaN accuracy
    assert set(expected["answer"]) == {"formal (1.00)", "casual (0.00)"}
    # A wrongly known answer is removed: its answers stop counting in the person's accuracy.
    removed = next(g for g in items.items if g.answers)
    at.selectbox(key="gold_remove_item").set_value(removed.id)
    next(b for b in at.button if b.label == "Remove from gold").click().run()
    no_exception(at)
    assert f"Gold item #{removed.id} removed with its {removed.answers} answer(s)" in " ".join(
        texts(at.success)
    )
    with Client(local_service.url, people["rev"]) as rev:
        assert removed.id not in {g.id for g in rev.gold(handle).items}
        people_after = rev.gold_accuracy(handle).people
    assert (people_after[0].answered if people_after else 0) == person.answered - removed.answers
    [table] = [d for d in at.dataframe if list(d.value.columns) == ITEM_COLUMNS]
    assert removed.id not in set(table.value["id"])
    _as(monkeypatch, local_service, people["ann"])
    at = page("team", handle)
    at.run()
    no_exception(at)
    assert "Gold items" not in texts(at.subheader)
    assert not any("gold" in t.lower() for t in texts(at.caption) + texts(at.warning))
