"""Sign-in through the team's identity provider (OpenID Connect): its settings, and the `[auth]` secrets
Streamlit's `st.login` reads. No Streamlit here: the launcher writes the secrets before Streamlit starts.

A team's workbench (`SCORING_TEAM=1`) signs people in through the provider when `SCORING_OIDC_ISSUER`,
`SCORING_OIDC_CLIENT_ID` and `SCORING_OIDC_CLIENT_SECRET` are set (docs/deployment-team.md, "A workbench for a
team"); each page's client then sends the person's ID token, and no key is pasted. The secrets are written
into the data directory, readable by its owner only, never into the project.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.config import workbench_settings
from app.shell.team_mode import team_mode
from core.config import env_name

SECRETS_NAME = "workbench_auth_secrets.toml"
COOKIE_SECRET_NAME = "workbench_cookie_secret"
#: Where the provider sends the browser back: Streamlit's own callback; `{port}` is the workbench's port.
DEFAULT_REDIRECT = "http://localhost:{port}/oauth2callback"


@dataclass(frozen=True)
class SignInConfig:
    issuer: str
    client_id: str
    client_secret: str
    redirect_uri: str
    cookie_secret: str | None  # None: one random secret kept in the data directory
    provider_name: str


def signin_config(environ: Mapping[str, str] | None = None) -> SignInConfig | None:
    """The provider's settings when a team's workbench signs people in through it; None otherwise.
    ValueError for a half-done configuration (a start-up mistake, said at once)."""
    settings = workbench_settings(environ)
    issuer, client_id = settings.oidc_issuer, settings.oidc_client_id
    client_secret = settings.oidc_client_secret
    given = {"oidc_issuer": issuer, "oidc_client_id": client_id, "oidc_client_secret": client_secret}
    if not any(given.values()):
        return None
    missing = [env_name(field) for field, value in given.items() if not value]
    if not (issuer and client_id and client_secret):
        raise ValueError(f"Sign-in through the identity provider needs {', '.join(missing)} as well.")
    if not team_mode(environ):
        raise ValueError("SCORING_OIDC_* is for a team's workbench: set SCORING_TEAM=1 and SCORING_API_URL.")
    public = (settings.workbench_url or "").rstrip("/")
    return SignInConfig(
        issuer=issuer,
        client_id=client_id,
        client_secret=client_secret,
        redirect_uri=f"{public}/oauth2callback" if public else DEFAULT_REDIRECT,
        cookie_secret=settings.oidc_cookie_secret,
        provider_name=settings.oidc_provider_name,
    )


def _cookie_secret(data_dir: Path) -> str:
    """A random secret that signs Streamlit's identity cookie, kept so a restart keeps people signed in."""
    path = data_dir / COOKIE_SECRET_NAME
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(secrets.token_hex(32))
        tmp.chmod(0o600)
        os.replace(tmp, path)
    return path.read_text().strip()


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def auth_secrets(config: SignInConfig, cookie_secret: str) -> str:
    """Streamlit's `[auth]` section: the provider (by its discovery document) and the ID token exposed to
    the app (`st.user.tokens["id"]`), which each page's client sends to the service."""
    discovery = f"{config.issuer.rstrip('/')}/.well-known/openid-configuration"
    lines = [
        "# Written at the workbench's start from SCORING_OIDC_* (app/shell/signin_config.py): never commit.",
        "[auth]",
        f"redirect_uri = {_toml(config.redirect_uri)}",
        f"cookie_secret = {_toml(cookie_secret)}",
        f"client_id = {_toml(config.client_id)}",
        f"client_secret = {_toml(config.client_secret)}",
        f"server_metadata_url = {_toml(discovery)}",
        'expose_tokens = ["id"]',
        "",
    ]
    return "\n".join(lines)


def write_auth_secrets(data_dir: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """Write the `[auth]` secrets for the configured provider into `data_dir` (owner-readable only) and
    return the file, for Streamlit's `--secrets.files`; None when sign-in is not configured."""
    config = signin_config(environ)
    if config is None:
        return None
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SECRETS_NAME
    tmp = path.with_suffix(".tmp")
    tmp.touch(mode=0o600)
    tmp.chmod(0o600)
    tmp.write_text(auth_secrets(config, config.cookie_secret or _cookie_secret(data_dir)))
    os.replace(tmp, path)
    return path
