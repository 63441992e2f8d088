"""A real OpenID Connect provider on loopback for the sign-in tests: oidc-provider-mock, in a thread.

It signs real RS256 ID tokens with its own key and serves its discovery document and keys, as a team's
provider does. Any client id and secret are accepted (the mock's default), which is how a test gets a token
for another audience. Users are set with their claims before they sign in (`PUT /users/<sub>`); a claim
given there (even `exp`) goes into the ID token as is, which is how a test gets an expired one.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import flask
import httpx
from joserfc.jwk import RSAKey

# Authlib turns its own deprecation warnings on for good as it loads (`simplefilter("always")`), ahead of the
# suite's filters: the two that the mock's import raises, listed in pyproject.toml, were shown in every run's
# summary. Loaded inside this block, its filter goes with the block and the suite's list decides.
with warnings.catch_warnings():
    importlib.import_module("authlib.deprecate")
from oidc_provider_mock import _app as mock_app  # noqa: E402
from oidc_provider_mock import run_server_in_thread  # noqa: E402

CLIENT_ID = "scoring-workbench"
CLIENT_SECRET = "test-client-secret"
CALLBACK = "http://localhost/callback"  # the mock accepts any redirect URI; nothing listens there

# The mock hands Authlib its signing key as a JWK dict for every ID token, and importing one checks the whole
# RSA key (a tenth of a second of CPU a token): each key is imported once, by its modulus (a rotated key is a
# new one), and every token is signed with it as before.
_signing_keys: dict[str, RSAKey] = {}
_mock_jwt_config = mock_app.OpenIDCode.get_jwt_config


def _jwt_config_with_an_imported_key(
    self: mock_app.OpenIDCode,
    grant: Any,  # Any: Authlib's grant, untyped
    client: object = None,
) -> dict[str, Any]:  # Any: the JWT settings Authlib reads, of mixed types
    config: dict[str, Any] = _mock_jwt_config(self, grant, client)
    jwk = config["key"]
    if jwk["n"] not in _signing_keys:
        _signing_keys[jwk["n"]] = RSAKey.import_key(jwk)
    config["key"] = _signing_keys[jwk["n"]]
    return config


mock_app.OpenIDCode.get_jwt_config = _jwt_config_with_an_imported_key


@dataclass(frozen=True)
class Idp:
    issuer: str
    # One client for every call: each new one builds an SSL context.
    http: httpx.Client
    app: flask.Flask

    def rotate_key(self) -> None:
        """Replace the provider's signing key with a new one, as a key rotation does: tokens signed from now
        on use it, and its JWKS lists only it. Its tokens name no `kid`, so a verifier cannot tell from a
        token that the key changed."""
        with self.app.test_request_context():
            self.app.preprocess_request()  # the mock hands its storage to a request through `flask.g`
            storage = flask.g.oidc_provider_mock_storage
            storage.jwk = type(storage.jwk).generate_key(is_private=True)

    def set_user(self, sub: str, **claims: Any) -> None:
        self.http.put(f"/users/{sub}", json=claims).raise_for_status()

    def token(self, sub: str, **claims: Any) -> str:
        """An ID token for `sub` carrying exactly `claims` besides the provider's own: the forged and
        altered tokens of the security tests (another account with someone's email, an unverified or
        changed email, several audiences with another `azp`, an old `iat`) are real, signed ones."""
        self.set_user(sub, **claims)
        return self.id_token(sub)

    def id_token(self, sub: str, client_id: str = CLIENT_ID) -> str:
        """Sign `sub` in through the authorization-code flow, as a browser and a client would."""
        query = {
            "client_id": client_id,
            "redirect_uri": CALLBACK,
            "response_type": "code",
            "scope": "openid email profile",
            "state": "s",
        }
        self.http.cookies.clear()  # each sign-in starts as a new browser would
        consent = self.http.post("/oauth2/authorize", params=query, data={"sub": sub})
        assert consent.status_code == 302, consent.text[-500:]
        found = re.search(r"[?&]code=([^&]+)", consent.headers["location"])
        assert found, consent.headers["location"]
        token = self.http.post(
            "/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "code": found.group(1),
                "redirect_uri": CALLBACK,
                "client_id": client_id,
                "client_secret": CLIENT_SECRET,
            },
        )
        token.raise_for_status()
        return str(token.json()["id_token"])


@contextmanager
def running_idp() -> Iterator[Idp]:
    with run_server_in_thread(port=0) as server:
        issuer = f"http://localhost:{server.server_port}"
        with httpx.Client(base_url=issuer) as http:
            app = server.app
            assert isinstance(app, flask.Flask)
            yield Idp(issuer, http, app)
