"""The client's people methods, and a person's ID token as its credential, against the real service
configured with a real OpenID Connect provider on loopback (tests/support/idp.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.client import (
    AuthenticationError,
    Client,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    ValidationError,
)
from service.config.settings import Settings
from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.audit import OPERATOR
from service.store.db import transaction
from service.store.people import set_member
from tests.support.client import BASE_URL
from tests.support.idp import CLIENT_ID, Idp, running_idp


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[TestClient, str, Idp]]:
    with running_idp() as idp:
        settings = Settings.from_env(
            data_dir=tmp_path, embedder="hashing", oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID
        )
        app = create_app(settings)
        with TestClient(app, raise_server_exceptions=False) as http:
            with transaction(app.state.ctx.sessions) as s:
                key = create_key(s, ["acme"], "authoring")
            yield http, key, idp


def test_people_through_the_client_and_a_person_s_token(team: tuple[TestClient, str, Idp]) -> None:
    http, key, idp = team

    def client(credential: str) -> Client:
        return Client(BASE_URL, credential, transport=http._transport, backoff=0.0)

    idp.set_user("ann", email="ann@example.com", email_verified=True, name="Ann")
    with client(key) as owner:
        added = owner.set_person_role("acme", "Ann@Example.com", "reviewer")
        assert (added.member, added.role, added.signed_in) == ("ann@example.com", "reviewer", False)
        with pytest.raises(ValidationError):
            owner.set_person_role("acme", "ann@example.com", "boss")
    with client(idp.id_token("ann")) as ann:
        me = ann.current_key()
        assert me.is_person and (me.name, me.display_name) == ("ann@example.com", "Ann")
        assert me.roles == {"acme": "reviewer"} and me.may("review", "acme") and not me.may("manage", "acme")
        with pytest.raises(PermissionDeniedError):
            ann.list_people("acme")  # a reviewer does not manage people
    with client(key) as owner:
        owner.set_person_role("acme", "ann@example.com", "owner")
    with client(idp.id_token("ann")) as ann:
        people = ann.list_people("acme")
        assert [(m.member, m.role, m.signed_in) for m in people] == [("ann@example.com", "owner", True)]
        assert ann.remove_person("acme", "ann@example.com").role == "owner"  # the key still owns acme
        with pytest.raises(PermissionDeniedError):
            list(ann.list_models(namespace="acme"))
    with client(key) as owner:
        with pytest.raises(NotFoundError):
            owner.remove_person("acme", "ann@example.com")
        assert owner.list_people("acme") == []
        with pytest.raises(ValueError, match="empty"):
            owner.remove_person("acme", " ")


def test_the_last_owner_person_cannot_step_down(team: tuple[TestClient, str, Idp]) -> None:
    http, _key, idp = team
    with transaction(http.app.state.ctx.sessions) as s:  # type: ignore[attr-defined]
        set_member(s, "solo", "bo@example.com", "owner", OPERATOR)
    idp.set_user("bo", email="bo@example.com", email_verified=True)
    with Client(BASE_URL, idp.id_token("bo"), transport=http._transport, backoff=0.0) as bo:
        with pytest.raises(ConflictError) as refused:
            bo.set_person_role("solo", "bo@example.com", "annotator")
        assert refused.value.code == "last_owner"


def test_a_person_signs_out_through_the_client(team: tuple[TestClient, str, Idp]) -> None:
    http, key, idp = team
    idp.set_user("cy", email="cy@example.com", email_verified=True)
    token = idp.id_token("cy")
    with Client(BASE_URL, token, transport=http._transport, backoff=0.0) as cy:
        assert cy.current_key().is_person
        assert cy.sign_out().signed_out_at is not None
        with pytest.raises(AuthenticationError, match="signed out"):
            cy.current_key()
    owner = Client(BASE_URL, key, transport=http._transport, backoff=0.0)
    with owner, pytest.raises(PermissionDeniedError):
        owner.sign_out()  # a key does not sign out: the operator revokes it
