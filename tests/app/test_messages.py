"""Messages a user meets on the pages say what is wrong and what to do, in the user's words."""

from __future__ import annotations

import pytest

from core.client import Client
from core.local import LocalService
from tests.app.apptest_util import by_label, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

DEVELOPER_WORDS = ("String should", "pydantic", "body.", "constrained-str", "Errno", "Error:", "Traceback")


def _plain(messages: list[str]) -> None:
    for message in messages:
        assert not any(w in message for w in DEVELOPER_WORDS), message


def test_score_states_the_20000_character_limit_for_any_long_text(trained: str) -> None:
    at = page("score", trained)
    at.run()
    for length in (20_001, 35_000):  # 35,000 was past the service's untrimmed bound: "at most 30000"
        at.text_area(key="score_text").set_value("x" * length)
        at.button(key="score_go").click()
        at.run()
        no_exception(at)
        errors = texts(at.error)
        assert any(
            f"Text has {length:,} characters; the limit is 20,000." in e and "Shorten the text" in e
            for e in errors
        ), errors
        _plain(errors)
    at.text_area(key="cmp_text_a").set_value("   ")
    at.text_area(key="cmp_text_b").set_value("Dear colleague, kindly review the report.")
    at.button(key="cmp_texts_go").click()
    at.run()
    errors = texts(at.error)
    assert any("Text is empty." in e and "Type or paste a text" in e for e in errors), errors
    _plain(errors)


def test_adding_a_too_long_sample_names_the_limit(client: Client, draft: str) -> None:
    before = len(list(client.list_samples(draft)))
    at = page("samples", draft)
    at.run()
    by_label(at.text_area, "Text").set_value("word " * 5_000 + "x" * 1_000)
    by_label(at.button, "Add sample").click()
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any("text has 26,000 characters; the limit is 20,000" in e for e in errors), errors
    _plain(errors)
    assert len(list(client.list_samples(draft))) == before


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("scoring.example.com/v1", "is not a service URL: it starts with http:// or https://"),
        ("ftp://scoring.example.com/v1", "is not a service URL"),
        ("http://127.0.0.1:9/v1", "cannot be reached"),
        ("{base}/elsewhere", "but not a scoring service: check the URL"),
        ("", "Enter both the service URL and an API key."),
    ],
)
def test_settings_says_what_is_wrong_with_the_address(service: LocalService, url: str, expected: str) -> None:
    at = page("settings")
    at.run()
    base = service.url.removesuffix("/v1")
    by_label(at.text_input, "Service URL").set_value(url.format(base=base))
    by_label(at.text_input, "API key").set_value(service.api_key if url else "")
    by_label(at.button, "Connect").click()
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any(expected in e for e in errors), errors
    _plain(errors)
    assert "remote_backend" not in at.session_state


def test_settings_says_a_wrong_key_is_not_valid(service: LocalService) -> None:
    at = page("settings")
    at.run()
    by_label(at.text_input, "Service URL").set_value(service.url)
    by_label(at.text_input, "API key").set_value("sk_not_a_key")
    by_label(at.button, "Connect").click()
    at.run()
    errors = texts(at.error)
    assert any("Check the API key" in e and "`unauthorized`" in e for e in errors), errors
    _plain(errors)


def test_samples_import_of_an_empty_file_says_what_to_upload(draft: str) -> None:
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("empty.csv", b"", "text/csv"))
    at.run()
    no_exception(at)
    shown = texts(at.error) + texts(at.warning) + texts(at.info) + texts(at.markdown)
    # Any columns import now (the analyst picks them), so the message asks for a header row, not given names.
    assert any("empty" in s.lower() and "header row" in s for s in shown), shown
    _plain(shown)
