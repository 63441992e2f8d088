"""The Settings page says what is wrong with an address or a key, in the user's words (AppTest, real
service, a real web page on loopback)."""

from __future__ import annotations

import http.server
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from core.local import LocalService
from tests.support.apptest import by_label, no_exception, page, plain, texts
from tests.support.loopback import serving

pytestmark = pytest.mark.usefixtures("app_env")


class _WebPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b"<!doctype html><title>Intranet</title><h1>Welcome</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web_page() -> Iterator[str]:
    """A real web server on loopback that answers every path with an HTML page (not the service)."""
    with serving(_WebPage) as url:
        yield url


def _connect(url: str, key: str) -> AppTest:
    at = page("settings")
    at.run()
    by_label(at.text_input, "Service URL").set_value(url)
    by_label(at.text_input, "API key").set_value(key)
    by_label(at.button, "Connect").click()
    at.run()
    no_exception(at)
    return at


def test_settings_says_a_web_page_is_not_the_service(web_page: str) -> None:
    at = _connect(web_page, "sk_whatever")
    errors = texts(at.error)
    assert any("not a scoring service" in e for e in errors), errors
    assert not any("Expecting value" in e for e in errors), errors
    assert "remote_backend" not in at.session_state


def test_settings_wrong_key_advice_does_not_point_at_settings(local_service: LocalService) -> None:
    at = _connect(local_service.url, "sk_local_notarealkey")
    errors = texts(at.error)
    assert errors and any("API key" in e for e in errors), errors
    assert not any("Settings" in e for e in errors), errors  # the user is on that page already


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
def test_settings_says_what_is_wrong_with_the_address(
    local_service: LocalService, url: str, expected: str
) -> None:
    at = page("settings")
    at.run()
    base = local_service.url.removesuffix("/v1")
    by_label(at.text_input, "Service URL").set_value(url.format(base=base))
    by_label(at.text_input, "API key").set_value(local_service.api_key if url else "")
    by_label(at.button, "Connect").click()
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any(expected in e for e in errors), errors
    plain(errors)
    assert "remote_backend" not in at.session_state


def test_settings_says_a_wrong_key_is_not_valid(local_service: LocalService) -> None:
    at = page("settings")
    at.run()
    by_label(at.text_input, "Service URL").set_value(local_service.url)
    by_label(at.text_input, "API key").set_value("sk_not_a_key")
    by_label(at.button, "Connect").click()
    at.run()
    errors = texts(at.error)
    assert any("Check the API key" in e and "`unauthorized`" in e for e in errors), errors
    plain(errors)
