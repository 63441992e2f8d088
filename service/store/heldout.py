"""The evaluation set is held out: which texts are the same, and the queries that keep its texts out of use.

One rule compares texts everywhere: two texts are the same when their stored texts (trimmed, as every text
is stored) have the same SHA-256, the `content_sha256` every duplicate check compares. A text is the
evaluation set's when an item of any trait has it (`_evaluation_texts`, the one query every check here reads):
a text is held out of the whole model, since labelling it for one trait makes it a training text of the next
version all the same. Whichever came first, such a text is never labelled nor trained on: a pool import
leaves it out, the pool's list, suggestions, assignments and the labelling routes leave out or refuse one
imported before the set had it, a sample import stores it and says so, training leaves its labels out, and
an evaluation leaves out the texts the version trained on (docs/api/versions.md, "The evaluation set is
held out").

What a version trained on is recorded with it, because the samples change after it is trained (a reopened
draft's edits and deletions, a retraining's feedback): `trained_record` keeps the content key
(`tables.key_of`, the first 64 bits of the hash) of each distinct text the training fitted, 8 bytes each,
sorted; a million-text training records 8 MB. Two texts share a key about once in 10^19 pairs: an evaluation
of a thousand texts against a million trained ones mistakes one for trained about once in 10^10 evaluations.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from service.store.samples import CHUNK
from service.store.schema import EvalItem, PoolText, SampleRow, Trait, content_key, key_of

#: A recorded key: an unsigned 64-bit integer, big-endian, so the record reads the same on any machine.
_KEY = np.dtype(">u8")


def _evaluation_texts(model_id: int) -> Select[tuple[str]]:
    """The content hashes of the model's evaluation set: what "a text of the evaluation set" means."""
    return select(EvalItem.content_sha256).where(EvalItem.model_id == model_id)


def evaluation_texts(session: Session, model_id: int) -> set[str]:
    """Every text of the model's evaluation set, as content hashes (training leaves out their labels)."""
    return set(session.scalars(_evaluation_texts(model_id).distinct()))


def outside_evaluation_set(model_id: int, digest: InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """A condition on a row's content hash column: its text is not in the model's evaluation set."""
    return digest.not_in(_evaluation_texts(model_id))


def evaluation_digests(session: Session, model_id: int, digests: Collection[str]) -> set[str]:
    """Those of `digests` that are texts of the model's evaluation set (one indexed query per chunk)."""
    wanted = sorted({key_of(d) for d in digests})
    found: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        found.update(
            session.scalars(
                _evaluation_texts(model_id).where(
                    content_key(EvalItem.content_sha256).in_(wanted[start : start + CHUNK])
                )
            )
        )
    return found & set(digests)  # the whole hash tells apart two texts that share a key


def evaluation_pool_ids(session: Session, model_id: int) -> set[int]:
    """Ids of the model's pool texts that are in its evaluation set (imported before the set had them)."""
    in_set = _evaluation_texts(model_id)
    return set(
        session.scalars(
            select(PoolText.id).where(PoolText.model_id == model_id, PoolText.content_sha256.in_(in_set))
        )
    )


def pool_digests(session: Session, model_id: int, digests: Collection[str]) -> set[str]:
    """Those of `digests` that are texts of the model's pool (the (model, hash) index)."""
    wanted = sorted(set(digests))
    found: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        found.update(
            session.scalars(
                select(PoolText.content_sha256).where(
                    PoolText.model_id == model_id, PoolText.content_sha256.in_(wanted[start : start + CHUNK])
                )
            )
        )
    return found


def sample_digests(session: Session, model_id: int, digests: Collection[str]) -> set[str]:
    """Those of `digests` that are texts of the model's samples, of any trait. Every trait named, so the
    (model, trait, content key) index answers: without them the database read all the model's samples for
    each chunk (a second a batch at a million samples)."""
    wanted = sorted({key_of(d) for d in digests})
    traits = list(session.scalars(select(Trait.id).where(Trait.model_id == model_id)))
    found: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        found.update(
            session.scalars(
                select(SampleRow.content_sha256)
                .where(
                    SampleRow.model_id == model_id,
                    SampleRow.trait_id.in_(traits),
                    content_key(SampleRow.content_sha256).in_(wanted[start : start + CHUNK]),
                )
                .distinct()
            )
        )
    return found & set(digests)  # the whole hash tells apart two texts that share a key


def _keys(digests: Iterable[str]) -> np.ndarray:
    return np.fromiter((int(key_of(d), 16) for d in digests), dtype=np.uint64)


def trained_record(digests: Iterable[str]) -> bytes:
    """What a version stores of the texts it trained on (the content hashes of its training texts)."""
    return np.unique(_keys(digests)).astype(_KEY).tobytes()


def trained_mask(record: bytes, digests: Sequence[str]) -> np.ndarray:
    """Which of `digests` are texts a version trained on, by the version's `trained_record`."""
    keys = np.frombuffer(record, dtype=_KEY).astype(np.uint64)
    return np.isin(_keys(digests), keys)
