"""Every line of an imported file accounted for on the pages that import files (AppTest against the real local
service): the uploader says where each line went, the Samples import separates rows stored from rows identical
to stored samples (listed with their lines), and an import that refused texts is never a green success."""

from __future__ import annotations

import pytest

from core.client import Client
from core.local import LocalService
from tests.support.app import make_draft, new_handle
from tests.support.apptest import by_label, no_exception, page, run_label_page, texts

pytestmark = pytest.mark.usefixtures("app_env")


def test_a_published_tsv_imports_every_line_and_names_the_duplicates(client: Client, draft: str) -> None:
    """`id<TAB>rating<TAB>text`, no header, as published: a text that opens with a quote (read as CSV
    quoting it joined the lines up to the next quote), two texts already stored as samples, one line twice,
    a blank line. Every row is accounted for: stored, identical to a sample stored before, or a repeat of an
    earlier line of the same file."""
    earlier = ["Please accept our apologies for the delay.", "lol k whatever"]  # a file imported before
    client.import_samples(
        draft,
        [{"trait": "formality", "text": t, "quality": q} for t, q in zip(earlier, (1.0, 0.0), strict=True)],
        provenance="imported",
    )
    before = client.get_model(draft).sample_count or 0
    lines = [
        '1\t2\t"Kindly note," the chair wrote, "the meeting is moved to Thursday at noon."',
        "2\t-2\tyo that party was sick lol, u missed out big time",
        f"3\t2\t{earlier[0]}",  # stored already: quality 1.0 on -2..+2
        f"4\t-2\t{earlier[1]}",  # stored already: quality 0.0
        "5\t2\tWe remain grateful for your patience while the report is prepared.",
        "",
        "5\t2\tWe remain grateful for your patience while the report is prepared.",  # the line again
        '6\t-1\tnah, "whatever" she said',
    ]
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("news.tsv", "\n".join(lines).encode(), "text/plain"))
    at.run()
    no_exception(at)
    assert "8 lines in the file: 7 rows, 1 blank." in texts(at.caption), texts(at.caption)
    assert any("Quotes are read as part of the texts" in t for t in texts(at.info)), texts(at.info)
    assert by_label(at.selectbox, "Text column").value == "column 3"
    by_label(at.selectbox, "Label column").set_value("column 2")
    at.run()
    at.button(key="samples_import").click()
    at.run()
    no_exception(at)
    # The line given twice was not "stored already" before the import: it is said to repeat the file.
    message = (
        "Stored 4 of 7 rows. 2 were identical to samples stored already (listed). "
        "1 repeated a row earlier in the file, stored once (listed)."
    )
    assert message in texts(at.success), texts(at.success) + texts(at.warning)
    assert client.get_model(draft).sample_count == before + 4
    listed = at.dataframe[-1].value
    assert listed["line"].tolist() == [3, 4, 7]
    assert all("stored already: nothing stored" in r for r in listed["reason"][:2])
    assert listed["reason"].tolist()[2] == "repeats line 5 of the file: stored once"
    stored = {s.text for s in client.list_samples(draft)}
    assert lines[0].split("\t")[2] in stored  # the quote is part of the text


def test_an_evaluation_file_with_rows_not_used_is_a_warning(
    local_service: LocalService, client: Client
) -> None:
    trained = make_draft(client, new_handle(local_service, "evalrows"))  # its own: the shared one has no set
    client.wait(trained, client.train(trained, "low").run_id, timeout=120)
    data = b"text\tlabel\nDear Sir, the report is attached.\t1\n\t0\nhey u up\t0\n"
    at = page("versions", trained)
    at.run()
    at.file_uploader(key="ev_upload_0").set_value(("held.tsv", data, "text/plain"))
    at.run()
    no_exception(at)
    at.button(key="ev_add").click()
    at.run()
    no_exception(at)
    warned = texts(at.warning)
    assert any(t.startswith("Added 2 items") and "1 row(s) of the file were not used" in t for t in warned)
    assert not any(t.startswith("Added") for t in texts(at.success))
    # The same file again: every item is in the set already, each listed with its line.
    at.file_uploader(key="ev_upload_1").set_value(("held.tsv", data, "text/plain"))
    at.run()
    at.button(key="ev_add").click()
    at.run()
    no_exception(at)
    assert any("2 were in the set already (listed)." in t for t in texts(at.warning)), texts(at.warning)
    listed = [d.value for d in at.dataframe if list(d.value.columns) == ["line", "reason"]]
    assert listed[0]["line"].tolist() == [2, 4]


def test_a_pool_import_that_refused_every_text_is_a_warning(client: Client, draft: str) -> None:
    """ "Added 0 of the file's 1,038 texts … they are in the evaluation set" was shown in green, and then as
    a bare count: it says plainly that none were added, and why."""
    held = ["The board approved the revised policy today.", "lol whatever, see u around"]
    client.add_evaluation_items(draft, [{"trait": "formality", "text": t, "quality": 1.0} for t in held])
    at = page("label", draft)
    run_label_page(at)
    at.file_uploader(key="pool_upload").set_value(("pool.txt", "\n".join(held).encode(), "text/plain"))
    at.run()
    at.button(key="pool_import").click()
    at.run()
    no_exception(at)
    expected = (
        "All 2 texts of this file are in the evaluation set, so none were added to the pool: a text used to "
        "evaluate the model must not be labelled for training."
    )
    assert texts(at.warning) == [expected] and list(client.list_pool(draft)) == []
    assert not any(t.startswith("Added") for t in texts(at.success))


def test_texts_already_in_the_pool_are_listed_with_their_lines(client: Client, draft: str) -> None:
    """A pool import tells apart a text in the pool before, a text repeated in the file and a text that is a
    sample already: each is counted as what it is, and the lines that added nothing say which."""
    client.import_pool(draft, ["A first text for the pool."])
    client.import_samples(draft, [{"trait": "formality", "text": "A text labelled already.", "quality": 1.0}])
    lines = [
        "A first text for the pool.",
        "A second text.",
        "",
        "A third text.",
        "A second text.",
        "A text labelled already.",
    ]
    at = page("label", draft)
    run_label_page(at)
    at.file_uploader(key="pool_upload").set_value(("pool.txt", "\n".join(lines).encode(), "text/plain"))
    at.run()
    assert "6 lines in the file: 5 rows, 1 blank." in texts(at.caption), texts(at.caption)
    at.button(key="pool_import").click()
    at.run()
    no_exception(at)
    said = " ".join(texts(at.success))
    assert "Added 3 of the file's 5 texts to the pool." in said, said
    assert "1 repeated a text earlier in the file, stored once. 1 was in the pool already." in said, said
    assert "1 of the texts added is a text of the model's samples, labelled already" in said, said
    listed = [d.value for d in at.dataframe if list(d.value.columns) == ["line", "reason"]]
    assert listed and listed[-1]["line"].tolist() == [1, 5]
    assert listed[-1]["reason"].tolist() == [
        "in the pool already: nothing added",
        "repeats line 2 of the file: nothing added",
    ]
