"""Gold items in the store: which texts are gold, so training, the evaluation set and the queue leave them
out (docs/api.md, "Gold items"). A text is gold for one trait: labelling it for another stays a vote."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.campaign_schema import GoldItem
from service.store.schema import PoolText, Trait


def gold_keys(session: Session, model_id: int) -> set[tuple[str, str]]:
    """(trait key, content hash) of the model's gold items: the labels training leaves out."""
    rows = session.execute(
        select(Trait.key, GoldItem.content_sha256)
        .join(Trait, Trait.id == GoldItem.trait_id)
        .where(GoldItem.model_id == model_id)
    ).tuples()
    return set(rows)


def gold_digests(session: Session, model_id: int, digests: Collection[str]) -> set[str]:
    """Those of `digests` that are the text of a gold item of any trait (the evaluation set's check)."""
    if not digests:
        return set()
    found = session.scalars(
        select(GoldItem.content_sha256).where(
            GoldItem.model_id == model_id, GoldItem.content_sha256.in_(set(digests))
        )
    )
    return set(found)


def gold_pool_ids(session: Session, model_id: int, trait_id: int) -> set[int]:
    """Ids of the pool texts that are gold items of the trait: served as gold only, never picked as texts."""
    gold = select(GoldItem.content_sha256).where(GoldItem.model_id == model_id, GoldItem.trait_id == trait_id)
    return set(
        session.scalars(
            select(PoolText.id).where(PoolText.model_id == model_id, PoolText.content_sha256.in_(gold))
        )
    )


def gold_of(session: Session, trait_id: int, digest: str) -> GoldItem | None:
    """The trait's gold item of this text, if it is one."""
    return session.scalar(
        select(GoldItem).where(GoldItem.trait_id == trait_id, GoldItem.content_sha256 == digest)
    )
