"""The ID-token verifier against a real OpenID Connect provider on loopback: the provider's keys are fetched
once, fetched again for a token that names a key not among them (a rotation), at most every REFETCH_S."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from service.http.oidc import OidcVerifier, TokenRejected
from tests.support.idp import CLIENT_ID, Idp, running_idp


class CountingVerifier(OidcVerifier):
    """The real verifier, counting its fetches of the provider's keys."""

    fetches = 0

    def _fetch(self):
        self.fetches += 1
        return super()._fetch()


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with running_idp() as provider:
        provider.set_user("una", email="una@example.com")
        yield provider


def _stranger(idp: Idp) -> str:
    """A token signed with a key the provider never published, under a key id it does not have."""
    key = RSAKey.generate_key(2048, parameters={"kid": "rotated"})
    claims = {"iss": idp.issuer, "aud": CLIENT_ID, "sub": "una", "iat": 1_900_000_000, "exp": 1_900_000_600}
    return jwt.encode({"alg": "RS256", "kid": "rotated"}, claims, key)


def test_keys_are_fetched_once_and_again_for_an_unknown_key_id(idp: Idp) -> None:
    verifier = CountingVerifier(idp.issuer, CLIENT_ID, refetch_s=0)
    for _ in range(3):
        assert verifier.verify(idp.id_token("una"))["email"] == "una@example.com"
    assert verifier.fetches == 1
    # An unknown key id: the keys are fetched again (a rotation is found so), and the token still refused.
    with pytest.raises(TokenRejected):
        verifier.verify(_stranger(idp))
    assert verifier.fetches == 2


def test_unknown_key_ids_fetch_at_most_every_refetch_interval(idp: Idp) -> None:
    verifier = CountingVerifier(idp.issuer, CLIENT_ID, refetch_s=3600)
    verifier.verify(idp.id_token("una"))
    for _ in range(3):  # a stream of forgeries costs the provider nothing more
        with pytest.raises(TokenRejected):
            verifier.verify(_stranger(idp))
    assert verifier.fetches == 1


def test_a_rotated_key_without_a_key_id_is_fetched_again_at_most_every_refetch_interval(idp: Idp) -> None:
    """The provider's tokens name no `kid`: after it rotates its key, a token whose signature the held keys
    do not verify makes the verifier fetch the keys again (once the refetch interval has passed since the
    last fetch), so sign-in keeps working without a restart; before that interval, no fetch."""
    now = [1000.0]
    verifier = CountingVerifier(idp.issuer, CLIENT_ID, refetch_s=30, clock=lambda: now[0])
    assert verifier.verify(idp.id_token("una"))["sub"] == "una"
    idp.rotate_key()
    rotated = idp.id_token("una")
    now[0] += 10  # within the interval: refused, and the provider is not asked again
    with pytest.raises(TokenRejected, match="signature"):
        verifier.verify(rotated)
    assert verifier.fetches == 1
    now[0] += 30
    assert verifier.verify(rotated)["sub"] == "una"
    assert verifier.fetches == 2
    assert verifier.verify(idp.id_token("una"))["sub"] == "una"  # the new key is held now
    assert verifier.fetches == 2
