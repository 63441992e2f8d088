"""Verifying the ID tokens of the team's identity provider (OpenID Connect), with joserfc (Authlib's JOSE).

The provider's signing keys come from the `jwks_uri` of its discovery document and are kept in memory; a
token signed with a key not among them makes one refetch (at most every `REFETCH_S` seconds, so a stream of
forged tokens cannot make the service hammer the provider), which is how a provider's key rotation is
picked up without a restart. "Not among them" is either a key id (`kid`) the held keys lack, or a signature
that none of the held keys verifies: a provider that names no `kid` (one key at a time) is otherwise
never asked again, and its rotation would lock everyone out until a restart. Checked: the signature
(asymmetric algorithms only), `iss`, `aud` (and `azp` when present or when `aud` lists several clients),
`exp` and `iat` (with the configured leeway), and that there is a `sub`.

httpx and joserfc load with the first token verified: a service without sign-in never needs them, and every
process start paid ~0.3 s of CPU for them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from service.http.signins import RefusalCap

if TYPE_CHECKING:
    from joserfc.jwk import KeySet

#: Signature algorithms an ID token may use: never `none`, never a shared-secret HS* (the client secret).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
REFETCH_S = 30.0
FETCH_TIMEOUT_S = 10.0


class TokenRejected(Exception):
    """The token is not one this service accepts; the message is for the caller (401)."""


class ProviderUnavailable(Exception):
    """The identity provider's keys could not be fetched (503: the token may well be valid)."""


def looks_like_jwt(credential: str) -> bool:
    """Three base64url parts: an ID token (an API key is `sk_…` and has no dot)."""
    return credential.count(".") == 2 and not credential.startswith("sk_")


class OidcVerifier:
    """One per API process: the issuer's keys, fetched on first use and refreshed on an unknown key id."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        leeway_s: int = 60,
        refetch_s: float = REFETCH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer  # compared with `iss` exactly, as OpenID Connect requires
        self.audience = audience
        self.leeway_s = leeway_s
        self.refetch_s = refetch_s
        self.clock = clock  # a test moves time past `refetch_s` without waiting
        self._lock = threading.Lock()
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        # The refused sign-in attempts this process records (service/http/signins.py), kept with the
        # verifier: both are one per API process.
        self.refusals = RefusalCap()

    def _fetch(self) -> KeySet:
        import httpx
        from joserfc.errors import JoseError
        from joserfc.jwk import KeySet

        try:
            with httpx.Client(timeout=FETCH_TIMEOUT_S, follow_redirects=True) as http:
                discovery = http.get(f"{self.issuer.rstrip('/')}/.well-known/openid-configuration")
                discovery.raise_for_status()
                jwks = http.get(str(discovery.json()["jwks_uri"]))
                jwks.raise_for_status()
                return KeySet.import_key_set(jwks.json())
        except (httpx.HTTPError, KeyError, ValueError, JoseError) as exc:
            raise ProviderUnavailable(
                f"The identity provider {self.issuer} did not give its signing keys: {exc}"
            ) from exc

    def _keys_with(self, kid: str | None) -> tuple[KeySet, bool]:
        """The key set, refetched first when it lacks `kid` (and the last fetch is old enough); and whether
        it was fetched just now."""
        with self._lock:
            # A token without `kid` (the provider has one key) is tried against every key held.
            known = self._keys is not None and (kid is None or any(k.kid == kid for k in self._keys))
            fetched = self._keys is None or (not known and self._stale())
            if fetched:
                self._keys = self._fetch()
                self._fetched_at = self.clock()
            assert self._keys is not None
            return self._keys, fetched

    def _stale(self) -> bool:
        return self.clock() - self._fetched_at >= self.refetch_s

    def _keys_after(self, tried: KeySet) -> KeySet | None:
        """New keys when none of `tried` verified the token's signature and the last fetch is old enough
        (another thread may have fetched them meanwhile); None when there is nothing new to try."""
        with self._lock:
            if self._keys is tried:
                if not self._stale():
                    return None
                self._keys = self._fetch()
                self._fetched_at = self.clock()
            return self._keys

    @staticmethod
    def _claims(token: str, keys: KeySet, kid: str | None) -> dict[str, Any] | None:
        """The token's claims if one of `keys` (the one named `kid`, if named) verifies its signature."""
        from joserfc import jwt
        from joserfc.errors import JoseError

        for key in keys:
            if kid is not None and key.kid != kid:
                continue
            try:
                return jwt.decode(token, key, algorithms=list(ALGORITHMS)).claims
            except JoseError:
                continue
        return None

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims once everything checks out; TokenRejected (401) or ProviderUnavailable."""
        from joserfc import jws, jwt
        from joserfc.errors import ExpiredTokenError, JoseError

        try:
            header = jws.extract_compact(token.encode()).headers()
        except (JoseError, ValueError) as exc:
            raise TokenRejected("The sign-in token is not a valid token.") from exc
        if header.get("alg") not in ALGORITHMS:
            raise TokenRejected("The sign-in token is not signed with an algorithm this service accepts.")
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        keys, fetched = self._keys_with(kid)
        claims = self._claims(token, keys, kid)
        if claims is None and not fetched and (fresh := self._keys_after(keys)) is not None:
            # The provider may have rotated its key under the same id, or under none: ask it once more.
            claims = self._claims(token, fresh, kid)
        if claims is None:
            raise TokenRejected("The sign-in token's signature does not verify.")
        registry = jwt.JWTClaimsRegistry(
            leeway=self.leeway_s,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.audience},
            exp={"essential": True},
            iat={"essential": True},
            sub={"essential": True},
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError as exc:
            raise TokenRejected("The sign-in token has expired: sign in again.") from exc
        except JoseError as exc:
            raise TokenRejected(f"The sign-in token is not for this service ({exc}).") from exc
        # OpenID Connect Core 3.1.3.7: a token for several audiences names the client it was issued to
        # (`azp`), which must be ours; otherwise another client's token that lists us would pass.
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        azp = claims.get("azp")
        if (len(audiences) > 1 or azp is not None) and azp != self.audience:
            raise TokenRejected("The sign-in token was issued to another application (its `azp`).")
        return claims
