"""The state most service tests start from, built in the store directly: a key's principal, a model with its
traits and samples. The same domain functions the routes call make it (so every rule and count the API keeps
holds), without an HTTP request, a JSON round trip or the guard per row: a test reads as what it sets up, and
what it asserts goes through the API as before.

    m = factories.model(svc, "acme.sentiment")               # two traits, 24 samples, a draft
    bare = factories.model(svc, "acme.empty", traits=[], samples=[])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.domain.models import create_model
from service.domain.samples import add_sample_batch
from service.domain.traits import add_traits
from service.schemas.models import ModelCreate, ModelOut
from service.schemas.samples import SampleIn
from service.schemas.traits import TraitIn
from service.store.api_keys import Principal, authenticate
from service.store.db import transaction
from tests.support.service import TRAITS, Svc
from tests.support.service import samples as labelled_samples

__all__ = ["key", "model", "principal"]


def principal(svc: Svc, headers: Mapping[str, str] | None = None) -> Principal:
    """Who a key's `Authorization` header (the authoring key `svc.author` by default) stands for."""
    token = (headers or svc.author)["Authorization"].removeprefix("Bearer ")
    with transaction(svc.ctx.sessions) as s:
        who = authenticate(s, token)
    assert who is not None, "not a key of this service"
    return who


def key(svc: Svc, namespaces: list[str], scope: str = "authoring") -> dict[str, str]:
    """A new key of `scope` on `namespaces`, stored directly: its `Authorization` header."""
    return svc.key(namespaces, scope)


def model(
    svc: Svc,
    handle: str,
    *,
    headers: Mapping[str, str] | None = None,
    traits: Sequence[Mapping[str, Any]] = TRAITS,
    samples: Sequence[Mapping[str, Any]] | None = None,
    **fields: Any,
) -> ModelOut:
    """A draft model `handle` made by the key of `headers` (the authoring key by default), with `traits`
    (Formality and Sentiment) and `samples` (tests.support.service.samples() for those traits, 24 labelled
    texts); `fields` are the create request's (`zero_data_retention=True`, `embedder=…`)."""
    who = principal(svc, headers)
    out = create_model(svc.ctx, who, ModelCreate(handle=handle, **fields))
    if traits:
        add_traits(svc.ctx, who, handle, [TraitIn(**t) for t in traits])
        rows = default_samples() if samples is None else samples
        if rows:
            add_sample_batch(svc.ctx, who, handle, [SampleIn(**row) for row in rows])
    return out


def default_samples() -> list[dict[str, Any]]:
    """The 24 samples of the default traits (tests.support.service.samples)."""
    return labelled_samples()
