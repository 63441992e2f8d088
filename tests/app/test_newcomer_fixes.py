"""The small things a newcomer tripped on: Traits, Settings, Versions, Training and Demo pages."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from core.client import Client
from core.local import LocalService
from tests.app.apptest_util import by_label, no_exception, page, texts
from tests.app.support import CASUAL, FORMAL, make_draft, new_handle

pytestmark = pytest.mark.usefixtures("app_env")


def _fill_trait(at: AppTest, name: str, negative: str = "calm", positive: str = "energetic") -> None:
    by_label(at.text_input, "Name").set_value(name)
    by_label(at.text_input, "Negative pole label").set_value(negative)
    by_label(at.text_input, "Positive pole label").set_value(positive)


def test_traits_add_form_clears_and_refuses_a_second_trait_of_the_same_name(
    client: Client, draft: str
) -> None:
    at = page("traits", draft)
    at.run()
    assert by_label(at.text_area, "Description")  # a box for a sentence per pole, not one line
    _fill_trait(at, "Energy")
    by_label(at.text_area, "Description").set_value(
        "How lively a text is.\nCalm: measured. Energetic: excited."
    )
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]
    assert (client.list_traits(draft)[1].description or "").count("\n") == 1
    # The form is empty for the next trait.
    assert [by_label(at.text_input, label).value for label in ("Name", "Negative pole label")] == ["", ""]
    assert by_label(at.text_area, "Description").value == ""

    _fill_trait(at, "energy ")  # the same name again (case and spaces aside)
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert any("already has a trait named" in e and "`energy`" in e for e in texts(at.error)), texts(at.error)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]  # no energy_2


def test_traits_delete_asks_for_confirmation(client: Client, draft: str) -> None:
    at = page("traits", draft)
    at.run()
    at.multiselect(key="traits_delete_pick").select("formality")
    at.run()
    assert at.button(key="traits_delete").disabled  # not before the confirmation
    assert any("removes" in w and "cannot be undone" in w for w in texts(at.warning)), texts(at.warning)
    at.checkbox(key="traits_delete_sure").check()
    at.run()
    at.button(key="traits_delete").click()
    at.run()
    no_exception(at)
    assert list(client.list_traits(draft)) == []


def test_traits_of_a_trained_model_offer_no_save(trained: str) -> None:
    at = page("traits", trained)
    at.run()
    no_exception(at)
    assert not [c for c in texts(at.caption) if "then save" in c]
    assert not [b for b in at.button if b.label == "Save trait edits"]


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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


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


def test_settings_wrong_key_advice_does_not_point_at_settings(service: LocalService) -> None:
    at = _connect(service.url, "sk_local_notarealkey")
    errors = texts(at.error)
    assert errors and any("API key" in e for e in errors), errors
    assert not any("Settings" in e for e in errors), errors  # the user is on that page already


def test_versions_evaluate_appears_right_after_adding_items(service: LocalService, client: Client) -> None:
    trained = make_draft(
        client, new_handle(service, "evalset")
    )  # its own: the shared one stays without a set
    client.wait(trained, client.train(trained, "low").run_id, timeout=120)
    csv = "trait,text,quality\n" + "".join(
        f'formality,"{t}",{q}\n' for ts, q in ((FORMAL[:3], 1), (CASUAL[:3], 0)) for t in ts
    )
    at = page("versions", trained)
    at.run()
    assert not [b for b in at.button if b.label == "Evaluate"]
    at.file_uploader[0].set_value(("items.csv", csv.encode(), "text/csv"))
    at.run()
    by_label(at.button, "Add to the evaluation set").click()
    at.run()
    no_exception(at)
    assert client.evaluation_set(trained).total == 6
    assert any("Added 6 items" in s for s in texts(at.success)), texts(at.success)
    assert [b for b in at.button if b.label == "Evaluate"]  # on this very run, not after another one


def test_training_metrics_say_they_are_out_of_fold(trained: str) -> None:
    at = page("training", trained)
    at.run()
    no_exception(at)
    assert any("out-of-fold" in c for c in texts(at.caption)), texts(at.caption)


def test_demo_share_link_uses_the_public_address(trained: str, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page("demo", trained, text="Kind regards, the board")
    at.run()
    no_exception(at)
    assert any("opens only on this computer" in c for c in texts(at.caption)), texts(at.caption)

    monkeypatch.setenv("SCORING_PUBLIC_URL", "https://workbench.example.com/")
    at = page("demo", trained, text="Kind regards, the board")
    at.run()
    no_exception(at)
    link = at.code[0].value
    assert link.startswith("https://workbench.example.com/demo?model="), link
    assert not any("opens only on this computer" in c for c in texts(at.caption))

    # The Settings page's address wins for this session.
    settings = page("settings")
    settings.run()
    by_label(settings.text_input, "Public address of the workbench").input("https://demo.example.org").run()
    assert settings.session_state["public_url"] == "https://demo.example.org"


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


def _scale(at: AppTest) -> tuple[float, float]:
    """The Import tab's proposed scale (its two boxes)."""
    boxes = {n.label: n.value for n in at.number_input if n.label in ("Scale from", "to")}
    low, high = boxes["Scale from"], boxes["to"]
    assert low is not None and high is not None, boxes
    return low, high
