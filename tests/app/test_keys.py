"""The workbench reads the key's scope and namespaces from the service (GET /keys/current)."""

from __future__ import annotations

import pytest

from core.local import LocalService
from service.config.settings import Settings
from service.store.api_keys import create_key
from service.store.db import make_engine, make_session_factory, transaction
from tests.support.apptest import by_label, main_app, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")


def make_key(local_service: LocalService, scope: str, *namespaces: str) -> str:
    """A new key in the running service's own database (as `python -m service keys create` does)."""
    engine = make_engine(Settings.from_env(data_dir=local_service.data_dir).database_url)
    try:
        with transaction(make_session_factory(engine)) as s:
            return create_key(s, list(namespaces), scope)
    finally:
        engine.dispose()


def test_namespace_picker_offers_the_keys_namespaces(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "SCORING_API_KEY", make_key(local_service, "authoring", "zeta", local_service.namespace)
    )
    monkeypatch.delenv("SCORING_NAMESPACE")
    at = main_app()
    at.run()
    no_exception(at)
    picker = at.sidebar.selectbox(key="namespace_picker")
    assert list(picker.options) == sorted([local_service.namespace, "zeta"])
    assert picker.value == local_service.namespace  # the key's first namespace by default
    assert (
        by_label(at.text_input, "Handle").value == f"{local_service.namespace}."
    )  # Models page: create here
    assert "Key scope: **authoring**" in texts(at.sidebar.caption)
    assert not at.sidebar.warning

    picker.set_value("zeta")
    at.run()
    no_exception(at)
    assert at.session_state["working_namespace"] == "zeta"
    assert at.sidebar.selectbox(key="namespace_picker").value == "zeta"
    assert by_label(at.text_input, "Handle").value == "zeta."


def test_scoring_namespace_picks_among_the_keys_namespaces(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "SCORING_API_KEY", make_key(local_service, "authoring", "zeta", local_service.namespace)
    )
    monkeypatch.setenv("SCORING_NAMESPACE", "zeta")
    at = main_app()
    at.run()
    no_exception(at)
    assert at.sidebar.selectbox(key="namespace_picker").value == "zeta"

    monkeypatch.setenv("SCORING_NAMESPACE", "not-owned")  # ignored: the key does not own it
    at = main_app()
    at.run()
    no_exception(at)
    assert at.sidebar.selectbox(key="namespace_picker").value == local_service.namespace


def test_scoring_key_shows_scope_and_read_only_notice(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORING_API_KEY", make_key(local_service, "scoring", local_service.namespace))
    at = main_app()
    at.run()
    no_exception(at)
    captions = texts(at.sidebar.caption)
    assert "Key scope: **scoring**" in captions
    assert f"Namespace: `{local_service.namespace}`" in captions  # one namespace: no picker
    assert any("read-only" in w for w in texts(at.sidebar.warning))

    settings = page("settings")
    settings.run()
    no_exception(settings)
    assert any("`scoring`" in str(m.value) for m in settings.markdown)
    assert any("read-only" in t for t in texts(settings.info))


def test_a_scoring_key_in_a_team_s_workbench_is_told_how_to_edit(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team's workbench takes no key on Settings: the notice says to sign in again with an authoring key
    (it sent the person to Settings, where there is nothing to change)."""
    monkeypatch.setenv("SCORING_TEAM", "1")
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    at = main_app()
    at.run()
    by_label(at.text_input, "Your API key").set_value(
        make_key(local_service, "scoring", local_service.namespace)
    )
    by_label(at.button, "Sign in").click()
    at.run()
    no_exception(at)
    [notice] = [w for w in texts(at.sidebar.warning) if "read-only" in w]
    assert "Settings" not in notice
    assert "**Sign out** (below) and sign in with an authoring key" in notice
    assert any(b.label == "Sign out" for b in at.sidebar.button)


def test_a_bad_key_is_an_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_API_KEY", "sk_000000000000_" + "A" * 43)
    at = main_app()
    at.run()
    no_exception(at)
    assert any("unauthorized" in t or "not valid" in t for t in texts(at.error))
    assert "Backend: **not connected**" in texts(at.sidebar.caption)
