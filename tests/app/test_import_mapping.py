"""The Import tab's mapping options, summary and neutral rows, and the grid after an import, with AppTest on
the Samples page against the real local service.

A new analyst's ratings file (mean ratings on a -4..+4 scale that never reach +-3): the proposal -3..+3 is
offered beside -4..+4, the ends they type survive a look at another rule, the summary names every rule and
the neutral rows, which are left out only when asked (and then listed), and the grid shows the stored rows as
soon as the import ends.
"""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.client import Client
from core.local import LocalService
from tests.support.app import new_handle
from tests.support.apptest import by_label, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

POLITENESS = {"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}
RATINGS = [
    ("Could you please take a look at this when you have a moment?", "2.8"),
    ("Why would you revert my edit without a word?", "-2.8"),
    ("Is there a reason the page was moved?", "0"),
    ("Thanks for the quick fix, would you mind adding a source?", "1.4"),
    ("Stop doing that.", "-1.2"),
    ("What does this function return?", "0"),
    ("Would it be possible to merge the two sections?", "0.6"),
    ("Did you even read the talk page?", "-0.4"),
]
FILE = "id,mean rating,request\n" + "".join(f'{i},{r},"{t}"\n' for i, (t, r) in enumerate(RATINGS, 1))


@pytest.fixture
def empty_draft(local_service: LocalService, client: Client) -> str:
    handle = new_handle(local_service, "ratings")
    client.create_model(handle, description="Requests rated -4..+4")
    client.add_traits(handle, [POLITENESS])
    return handle


def _open_with_file(handle: str) -> AppTest:
    at = page("samples", handle)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("ratings.csv", FILE.encode(), "text/csv"))
    at.run()
    no_exception(at)
    return at


def _boxes(at: AppTest) -> tuple[Any, Any]:
    boxes = {n.label: n.value for n in at.number_input}
    return boxes.get("Scale from"), boxes.get("to")


def _summary(at: AppTest) -> str:
    found = [t for t in texts(at.markdown) if t.startswith("**Mapping:**")]
    assert len(found) == 1, texts(at.markdown)
    return found[0]


def test_the_ends_the_analyst_typed_survive_a_look_at_another_rule(empty_draft: str) -> None:
    at = _open_with_file(empty_draft)
    assert _boxes(at) == (-3.0, 3.0)  # the smallest scale that holds -2.8..2.8
    by_label(at.number_input, "Scale from").set_value(-4.0).run()
    by_label(at.number_input, "to").set_value(4.0).run()
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    no_exception(at)
    assert _boxes(at) == (None, None)  # not drawn: Streamlit forgets their state
    threshold_summary = [t for t in texts(at.markdown) if t.startswith("**Mapping:**")]
    by_label(at.radio, "Label → quality").set_value("scale").run()
    no_exception(at)
    assert _boxes(at) == (-4.0, 4.0)
    assert threshold_summary == [
        "**Mapping:** > 0 → 1.0 (positive), < 0 → 0.0 (negative), 0 → 0.5 (neutral); 2 rows neutral."
    ]
    assert _summary(at) == ("**Mapping:** −4..+4 → quality 0..1; middle 0 → 0.5, neutral; 2 rows neutral.")
    # The threshold the analyst typed is theirs too, and so is the direction.
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    assert by_label(at.number_input, "Positive at or above").value == 0.0  # the middle of −4..+4
    by_label(at.number_input, "Positive at or above").set_value(0.2).run()
    by_label(at.radio, "A higher label is").set_value("the negative pole").run()
    by_label(at.radio, "Label → quality").set_value("quantiles").run()
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    assert by_label(at.number_input, "Positive at or above").value == 0.2
    assert _summary(at) == (
        "**Mapping:** < 0.2 → 1.0 (positive), > 0.2 → 0.0 (negative), 0.2 → 0.5 (neutral); no row neutral."
    )
    by_label(at.checkbox, "exactly 0.2 → 0.5 (neutral)").uncheck().run()
    assert _summary(at) == ("**Mapping:** ≤ 0.2 → 1.0 (positive), above → 0.0 (negative); no row neutral.")


def test_the_threshold_on_a_symmetric_scale_leaves_its_middle_neutral(
    client: Client, empty_draft: str
) -> None:
    """On −4..+4 the threshold proposed is the middle, 0: a rating of exactly 0 is neutral by default, not
    quietly positive (it made 244 snippets rated 0 positive)."""
    at = _open_with_file(empty_draft)
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    no_exception(at)
    assert by_label(at.checkbox, "exactly 0 → 0.5 (neutral)").value is True
    counts = [d.value for d in at.dataframe if "neutral" in d.value.columns]
    assert counts[0].to_dict("records") == [
        {"trait": "politeness", "negative": 3, "neutral": 2, "positive": 3, "graded": 2}
    ]
    at.button(key="samples_import").click().run()
    no_exception(at)
    assert sorted(s.quality for s in client.list_samples(empty_draft)) == [0, 0, 0, 0.5, 0.5, 1, 1, 1]


def test_a_proposed_scale_the_labels_fall_short_of_offers_the_next_one(empty_draft: str) -> None:
    at = _open_with_file(empty_draft)
    scale = by_label(at.radio, "Scale")
    assert scale.options == ["−3..+3", "−4..+4", "another: type its ends"]
    # The ratings fit both: none is picked for the analyst, and nothing can be imported until they pick.
    assert scale.value is None
    # Until then the mapping line, the counts and the preview use a scale: the page says which, and why.
    assert texts(at.warning) == [
        "Until you pick the file's scale above, the mapping, the counts and the preview below assume "
        "−3..+3, the smallest scale that holds your labels. Nothing is imported before you pick: the scale "
        "decides every quality."
    ]
    assert not [w for w in texts(at.warning) + texts(at.info) if "first" in w]
    assert not [b for b in at.button if b.key == "samples_import"]
    note = [c for c in texts(at.info) if c.startswith("Your labels span")]
    assert note == [
        "Your labels span −2.8..2.8, short of both ends of −3..+3 (the smallest scale that holds them): "
        "is the file's scale −3..+3 or −4..+4? It decides every quality: 2.8 is 0.97 on −3..+3, "
        "0.85 on −4..+4."
    ]
    scale.set_value("−4..+4").run()  # the boxes follow
    assert _boxes(at) == (-4.0, 4.0)
    assert at.button(key="samples_import").disabled is False
    by_label(at.number_input, "Scale from").set_value(-5.0).run()  # typed: no candidate any more
    assert by_label(at.radio, "Scale").value == "another: type its ends"
    by_label(at.number_input, "to").set_value(5.0).run()
    assert _boxes(at) == (-5.0, 5.0)
    # Integer ratings that reach both ends name their scale: nothing to ask.
    stars = "stars,text\n" + "".join(f"{s},Review {s}\n" for s in (1, 2, 3, 4, 5))
    at.file_uploader(key="samples_upload").set_value(("stars.csv", stars.encode(), "text/csv")).run()
    no_exception(at)
    assert _boxes(at) == (1.0, 5.0)
    assert not [r for r in at.radio if r.label == "Scale"]
    assert not [i for i in texts(at.info) if i.startswith("Your labels span")]


def test_the_scale_picker_keeps_its_options_after_an_import(empty_draft: str) -> None:
    """The browser sends back the text of the option it shows. An import makes its scale the model's last
    one; were that option renamed for it ("(the last import's)"), the next run would hand the picker's
    callback a text no option has (a TypeError on the page, in the browser, after the import)."""
    at = _open_with_file(empty_draft)
    by_label(at.radio, "Scale").set_value("−4..+4").run()
    before = by_label(at.radio, "Scale").options
    at.button(key="samples_import").click().run()
    no_exception(at)
    after = by_label(at.radio, "Scale")
    assert after.options == before and after.value == "−4..+4"
    assert _boxes(at) == (-4.0, 4.0)


def test_neutral_rows_are_counted_and_left_out_only_when_asked(client: Client, empty_draft: str) -> None:
    at = _open_with_file(empty_draft)
    by_label(at.number_input, "Scale from").set_value(-4.0).run()
    by_label(at.number_input, "to").set_value(4.0).run()
    leave_out = by_label(at.checkbox, "leave out the 2 neutral rows")
    assert leave_out.value is False
    counts = [d.value for d in at.dataframe if "neutral" in d.value.columns]
    assert counts and counts[0].to_dict("records") == [
        {"trait": "politeness", "negative": 3, "neutral": 2, "positive": 3, "graded": 8}
    ]
    leave_out.check().run()
    no_exception(at)
    assert _summary(at).endswith("; 2 rows neutral, left out as asked.")
    assert any("6 row(s) read, 0 unreadable, 2 neutral left out." in t for t in texts(at.markdown))
    not_imported = [d.value for d in at.dataframe if list(d.value.columns) == ["line", "reason"]]
    assert not_imported and not_imported[0].to_dict("records") == [
        {"line": 4, "reason": "neutral: label 0 → quality 0.5, neither pole; left out as asked"},
        {"line": 7, "reason": "neutral: label 0 → quality 0.5, neither pole; left out as asked"},
    ]
    # Kept across a look at another rule, like any option the analyst set.
    by_label(at.radio, "Label → quality").set_value("as_is").run()
    by_label(at.radio, "Label → quality").set_value("scale").run()
    assert by_label(at.checkbox, "leave out the 2 neutral rows").value is True
    at.button(key="samples_import").click().run()
    no_exception(at)
    assert any("Stored 6 of 8 rows. 2 neutral row(s) left out, as asked." in t for t in texts(at.success)), (
        texts(at.success)
    )
    stored = sorted(s.quality for s in client.list_samples(empty_draft))
    assert stored == [0.15, 0.35, 0.45, 0.575, 0.675, 0.85]


def test_the_grid_shows_the_stored_rows_right_after_the_import(empty_draft: str) -> None:
    at = _open_with_file(empty_draft)
    grid = at.dataframe[0].value
    assert grid["text"].dropna().tolist() == []  # an empty draft: the empty rows to type into only
    by_label(at.radio, "Scale").set_value("−3..+3").run()
    at.button(key="samples_import").click().run()
    no_exception(at)
    assert any("Stored 8 of 8 rows." in t for t in texts(at.success))
    grid = at.dataframe[0].value
    assert sorted(grid["text"].dropna()) == sorted(t for t, _ in RATINGS)


def test_a_second_file_into_a_model_is_proposed_the_scale_of_the_first(client: Client, draft: str) -> None:
    """Found in a journey: a held-out file whose ratings span -1..1.9 was proposed the scale
    -2..2 while the samples had used -4..4, so one rating meant two qualities."""
    first = "id,score,review\n" + "".join(
        f'a{i},{s},"Review {i} of the kettle"\n' for i, s in enumerate((-3, 3.6))
    )
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("first.csv", first.encode(), "text/csv"))
    at.run()
    [trait] = [s for s in at.selectbox if s.label == "Trait" and (s.key or "").startswith("import_")]
    trait.set_value("trait: formality")
    at.run()
    assert _scale(at) == (-4, 4)
    by_label(at.radio, "Scale").set_value("−4..+4").run()  # −3 and 3.6 fit −5..+5 too: the analyst picks
    at.button(key="samples_import").click()
    at.run()
    no_exception(at)
    second = "id,score,review\n" + "".join(f'b{i},{s},"Another {i}"\n' for i, s in enumerate((-1, 1.9)))
    at.file_uploader(key="samples_upload").set_value(("second.csv", second.encode(), "text/csv"))
    at.run()
    no_exception(at)
    assert _scale(at) == (-4, 4)  # this file alone says -2..2; its ratings fit the model's -4..4
    assert any("The scale of the last import into this model" in c for c in texts(at.caption)), texts(
        at.caption
    )
    # A file whose own numbers guess that same scale, yet fit a wider one too, is not asked it again.
    # Another shape of file (nothing kept from the first's pickers), as an evaluation set's file often is.
    third = "rating,text\n" + "".join(f'{s},"A third {i}"\n' for i, s in enumerate((-3.5, 3.2)))
    at.file_uploader(key="samples_upload").set_value(("third.csv", third.encode(), "text/csv"))
    at.run()
    no_exception(at)
    assert _scale(at) == (-4, 4)
    # The last import's, not asked again.
    assert [r.value for r in at.radio if r.label == "Scale"] == ["−4..+4"]


def _scale(at: AppTest) -> tuple[float, float]:
    """The Import tab's proposed scale (its two boxes)."""
    boxes = {n.label: n.value for n in at.number_input if n.label in ("Scale from", "to")}
    low, high = boxes["Scale from"], boxes["to"]
    assert low is not None and high is not None, boxes
    return low, high


def test_each_option_shows_the_analyst_s_value_even_when_drawn_afresh(empty_draft: str) -> None:
    """On a busy machine the run that draws a widget again can be cut short by the next one before the
    browser got its value; the browser then draws it from the widget's own default and sends that back.
    So every option's default is the value it shows (the analyst's), never Streamlit's 0.0 or first option."""
    at = _open_with_file(empty_draft)
    by_label(at.number_input, "Scale from").set_value(-4.0).run()
    by_label(at.number_input, "to").set_value(4.0).run()
    by_label(at.radio, "A higher label is").set_value("the negative pole").run()
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    by_label(at.radio, "Label → quality").set_value("scale").run()
    no_exception(at)
    boxes = {n.label: n.proto.default for n in at.number_input}
    assert (boxes["Scale from"], boxes["to"]) == (-4.0, 4.0)
    assert by_label(at.radio, "A higher label is").index == 1
    for choice in [*at.radio, *at.selectbox]:
        assert choice.proto.default == choice.index, choice.label


def test_the_analyst_s_choices_are_proposed_for_the_next_file_of_the_same_shape(empty_draft: str) -> None:
    """The other part of a split (same columns, other rows) starts from the scale, rule and threshold the
    analyst chose for the first part, without importing it; a file of other columns from its own data."""
    at = _open_with_file(empty_draft)
    by_label(at.radio, "Scale").set_value("−4..+4").run()
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    by_label(at.number_input, "Positive at or above").set_value(1.0).run()
    by_label(at.radio, "Label → quality").set_value("scale").run()
    rest = "id,mean rating,request\n" + "".join(f'{i},{r},"Request {i}"\n' for i, r in ((9, 1.5), (10, -2)))
    at.file_uploader(key="samples_upload").set_value(("rest.csv", rest.encode(), "text/csv")).run()
    no_exception(at)
    assert by_label(at.radio, "Label → quality").value == "scale"
    assert _boxes(at) == (-4.0, 4.0)  # its own labels say −2..+2
    by_label(at.radio, "Label → quality").set_value("threshold").run()
    assert by_label(at.number_input, "Positive at or above").value == 1.0
    other = "stars,text\n" + "".join(f"{s},Review {s}\n" for s in (1, 2, 4))
    at.file_uploader(key="samples_upload").set_value(("stars.csv", other.encode(), "text/csv")).run()
    no_exception(at)
    assert by_label(at.radio, "Label → quality").value == "scale" and _boxes(at) == (1.0, 4.0)


def test_a_new_session_is_proposed_the_scale_of_the_last_import_into_the_model(empty_draft: str) -> None:
    """A reload or another tab is a new session: the next file of the same columns (the evaluation set's,
    the other part of a split) is proposed the scale the last import into the model used, not asked again."""
    at = _open_with_file(empty_draft)
    by_label(at.radio, "Scale").set_value("−4..+4").run()
    at.button(key="samples_import").click().run()
    no_exception(at)
    rest = "id,mean rating,request\n" + "".join(f'{i},{r},"Request {i}"\n' for i, r in ((9, 1.5), (10, -2.6)))
    again = page("samples", empty_draft)  # a session of its own: nothing of the first one's state
    again.run()
    again.file_uploader(key="samples_upload").set_value(("rest.csv", rest.encode(), "text/csv")).run()
    no_exception(again)
    assert _boxes(again) == (-4.0, 4.0)  # its own labels say −3..+3
    assert [r.value for r in again.radio if r.label == "Scale"] == ["−4..+4"]  # picked: not asked again
    assert not again.button(key="samples_import").disabled
