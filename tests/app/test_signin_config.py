"""A team's workbench configured for sign-in through the identity provider: the settings it reads and the
`[auth]` secrets it writes for Streamlit's `st.login` (never into the project)."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from app.banner import banner
from app.launch import secrets_options
from app.shell.signin_config import SECRETS_NAME, signin_config, write_auth_secrets

TEAM = {"SCORING_TEAM": "1", "SCORING_API_URL": "http://svc:8000"}
OIDC = {
    "SCORING_OIDC_ISSUER": "https://id.example.com/",
    "SCORING_OIDC_CLIENT_ID": "workbench",
    "SCORING_OIDC_CLIENT_SECRET": 'se"cret',
}


def test_no_provider_no_sign_in() -> None:
    assert signin_config(TEAM) is None
    assert signin_config({}) is None


def test_a_half_configuration_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="SCORING_OIDC_CLIENT_SECRET"):
        signin_config({**TEAM, "SCORING_OIDC_ISSUER": "https://id", "SCORING_OIDC_CLIENT_ID": "x"})
    with pytest.raises(ValueError, match="SCORING_TEAM=1"):
        signin_config(OIDC)


def _auth(data_dir: Path, env: dict[str, str]) -> dict[str, object]:
    path = write_auth_secrets(data_dir, env)
    assert path is not None
    auth: dict[str, object] = tomllib.loads(path.read_text())["auth"]
    return auth


def test_the_secrets_are_written_for_streamlit_readable_by_their_owner_only(tmp_path: Path) -> None:
    env = {**TEAM, **OIDC, "SCORING_WORKBENCH_URL": "https://bench.example.com/"}
    path = write_auth_secrets(tmp_path, env)
    assert path == tmp_path / SECRETS_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    auth = tomllib.loads(path.read_text())["auth"]
    assert auth["redirect_uri"] == "https://bench.example.com/oauth2callback"
    assert auth["server_metadata_url"] == "https://id.example.com/.well-known/openid-configuration"
    assert (auth["client_id"], auth["client_secret"], auth["expose_tokens"]) == (
        "workbench",
        'se"cret',
        ["id"],
    )
    assert len(auth["cookie_secret"]) == 64
    # The cookie secret is kept: a restart keeps people signed in.
    assert _auth(tmp_path, env)["cookie_secret"] == auth["cookie_secret"]
    assert _auth(tmp_path, {**env, "SCORING_OIDC_COOKIE_SECRET": "c" * 40})["cookie_secret"] == "c" * 40
    # Without a public address: Streamlit fills in its own port.
    assert _auth(tmp_path, {**TEAM, **OIDC})["redirect_uri"] == "http://localhost:{port}/oauth2callback"


def test_the_launcher_hands_the_secrets_to_streamlit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_DATA_DIR", str(tmp_path))
    assert secrets_options(lambda _: None) == []
    options = secrets_options(lambda d: d / SECRETS_NAME)
    assert options[-2:] == ["--secrets.files", str(tmp_path / SECRETS_NAME)]
    assert options.count("--secrets.files") == 3  # the usual .streamlit/secrets.toml files are kept


def test_the_banner_says_how_people_sign_in() -> None:
    assert "sign in through the identity provider at https://id.example.com/" in banner(
        8501, {**TEAM, **OIDC}
    )
    assert "each browser signs in with its own key" in banner(8501, TEAM)


def test_the_banner_opens_the_address_the_provider_sends_people_back_to() -> None:
    """A sign-in begun at 127.0.0.1 came back to localhost without its cookie and started over."""
    assert "open http://localhost:8501 in your browser" in banner(8501, {**TEAM, **OIDC})
    public = {**TEAM, **OIDC, "SCORING_WORKBENCH_URL": "http://127.0.0.1:{port}/"}
    assert "open http://127.0.0.1:8501 in your browser" in banner(8501, public)


def test_the_team_progress_says_nobody_labelled_in_the_team_s_words() -> None:
    """People signed in through the provider have no keys: an empty progress table speaks of people."""
    from app.team.progress import nobody_yet

    signed_in = nobody_yet({**TEAM, **OIDC})
    assert signed_in.startswith("Nobody has labelled this model yet") and "key" not in signed_in
    assert "named key" in nobody_yet(TEAM)
