"""`Client.current_key()` against the real service."""

from __future__ import annotations

import pytest

from core.client import AuthenticationError, KeyInfo
from tests.support.client import NAMESPACE, OTHER_NAMESPACE, Service


def test_current_key_per_role(service: Service) -> None:
    with service.client("author") as c:
        author = c.current_key()
    assert isinstance(author, KeyInfo)
    assert (author.scope, author.namespaces, author.can_author) == ("authoring", [NAMESPACE], True)
    assert service.keys["author"].startswith(f"sk_{author.prefix}_")
    assert author.created_at is not None and author.created_at.tzinfo is not None

    with service.client("scorer") as c:
        scorer = c.current_key()
    assert (scorer.scope, scorer.namespaces, scorer.can_author) == ("scoring", [NAMESPACE], False)
    with service.client("outsider") as c:
        assert c.current_key().namespaces == [OTHER_NAMESPACE]


def test_current_key_rejects_a_bad_key(service: Service) -> None:
    with service.client("sk_000000000000_" + "A" * 43) as c, pytest.raises(AuthenticationError):
        c.current_key()  # an unknown role is sent as the key itself
