"""The claim invariants under generated interleavings of claims, renewals, labels and releases by several
people: a text never gets more votes than wanted, and never has more holders than the votes it still wants."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from service.store.claims import votes_on
from service.store.db import transaction
from service.store.schema import Model, PoolClaim, PoolText, Trait, utcnow
from tests.service.test_claims import POOL, TRAITS, person
from tests.support.service import Svc, check

PEOPLE = ("alice", "bob", "carol")
TEXTS = 6
_handles = itertools.count()

step = st.tuples(
    st.sampled_from(PEOPLE),
    st.sampled_from(("suggest", "label", "release")),
    st.integers(1, TEXTS),  # k for a suggestion, the text's place in the pool otherwise
)


def _check_invariants(svc: Svc, handle: str, wanted: int) -> None:
    with transaction(svc.ctx.reads) as s:
        model = s.scalar(select(Model).where(Model.handle == handle))
        assert model is not None
        trait = s.scalar(select(Trait).where(Trait.model_id == model.id))
        assert trait is not None
        texts = dict(
            s.execute(select(PoolText.id, PoolText.content_sha256).where(PoolText.model_id == model.id))
            .tuples()
            .all()
        )
        votes = votes_on(s, model.id, trait.id, trait.key, set(texts.values()))
        live = (
            s.execute(
                select(PoolClaim.pool_text_id, PoolClaim.annotator).where(
                    PoolClaim.model_id == model.id, PoolClaim.expires_at > utcnow()
                )
            )
            .tuples()
            .all()
        )
    for pid, digest in texts.items():
        voters = votes.get(digest)
        count = voters.count if voters else 0
        holders = [a for p, a in live if p == pid and not (voters and a in voters.names)]
        assert count <= wanted, (pid, count, wanted)
        assert count + len(holders) <= wanted, (pid, count, holders, wanted)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(wanted=st.integers(1, 2), steps=st.lists(step, min_size=1, max_size=14))
def test_votes_never_exceed_votes_wanted_and_no_text_has_more_holders_than_room(
    svc: Svc, wanted: int, steps: list[tuple[str, str, int]]
) -> None:
    c, handle = svc.client, f"acme.inv{next(_handles)}"
    check(c.post("/v1/models", json={"handle": handle, "votes_wanted": wanted}, headers=svc.author), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    ids = check(c.post(f"/v1/models/{handle}/pool", json={"texts": POOL[:TEXTS]}, headers=svc.author), 201)[
        "ids"
    ]
    keys = {name: person(svc, f"{name}{handle.rsplit('inv', 1)[1]}") for name in PEOPLE}
    for name, op, n in steps:
        key = keys[name]
        if op == "suggest":
            body: dict[str, Any] = {"trait": "formality", "k": n, "claim": True}
            check(c.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=key), 200)
        elif op == "label":
            body = {"trait": "formality", "quality": 1.0}
            got = c.post(f"/v1/models/{handle}/pool/{ids[n - 1]}/label", json=body, headers=key)
            assert got.status_code in (201, 409), got.text
        else:
            check(c.delete(f"/v1/models/{handle}/pool/{ids[n - 1]}/claim", headers=key), 200)
        _check_invariants(svc, handle, wanted)
