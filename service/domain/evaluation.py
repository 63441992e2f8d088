"""Evaluation sets (held-out labelled items, never trained on), starting an evaluation of a version, and a
version's stored evaluation with the labelled scores it holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from core import engine
from core.engine.votes import CountedText, count_votes
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.needs import Databases, Resources, RunStarter
from service.domain.samples import label_authors
from service.domain.states import require, require_not_archived
from service.domain.traits import TraitRefs
from service.domain.versions import resolve_version
from service.errors import ApiError
from service.schemas.evaluation import (
    EvalAdded,
    EvalDeleted,
    EvalSetOut,
    EvalTraitCounts,
    EvaluationOut,
    EvaluationStarted,
)
from service.schemas.samples import LabelIn
from service.store import audit, ledger, quotas
from service.store.api_keys import Principal
from service.store.db import analyze_after_growth, rows_changed, transaction
from service.store.gold import gold_digests
from service.store.heldout import evaluation_texts, pool_digests, sample_digests
from service.store.samples import CHUNK, sha256
from service.store.schema import (
    EvalItem,
    Evaluation,
    Model,
    Trait,
    Version,
    content_key,
    key_of,
    pole_sql,
    utcnow,
)
from service.store.votes import eval_votes

#: What an evaluation reports per trait about the human ceiling (docs/api.md, "Human ceiling").
CEILING_FIELDS = ("human_ceiling", "model_agreement", "share_of_ceiling")

ItemKey = tuple[str, str, float, str | None]  # (trait key, content hash, quality, annotator): stored once


def stored_evaluation(s: Session, model: Model, version: Version) -> Evaluation:
    """The version's latest evaluation, with per-item scores (404 / 409 otherwise)."""
    found = latest_evaluation(s, model.id, version.version_no)
    if found is None:
        raise ApiError(
            404, "evaluation_not_found", f"v{version.version_no} of {model.handle} was not evaluated yet."
        )
    if "item_scores" not in found.metrics:
        raise ApiError(
            409,
            "evaluation_outdated",
            f"The evaluation of v{version.version_no} predates per-item scores: evaluate the version again.",
        )
    return found


def labelled_scores(s: Session, found: Evaluation, trait: str) -> tuple[np.ndarray, np.ndarray]:
    """(scores, quality) of one trait's texts that are still in the evaluation set."""
    scores = item_scores(found.metrics["item_scores"], trait)
    # Per text, its votes counted (as the evaluation's metrics are): one vote per text is one item as before.
    counted = count_votes(v for v in eval_votes(s, found.model_id) if v.id in scores)
    return np.array([scores[c.votes[0].id] for c in counted]), np.array([c.quality for c in counted])


def ceiling_fields(counted: Sequence[CountedText], scores: Mapping[str, float]) -> JsonObject:
    """A trait's `human_ceiling`, `model_agreement` and `share_of_ceiling` (null without texts of 2 votes)."""
    found = engine.human_ceiling(counted, scores)
    if found is None:
        return dict.fromkeys(CEILING_FIELDS)
    return found.as_dict()


def latest_evaluation(s: Session, model_id: int, version_no: int) -> Evaluation | None:
    """The newest stored evaluation of one version, or None."""
    return s.scalar(
        select(Evaluation)
        .where(Evaluation.model_id == model_id, Evaluation.version_no == version_no)
        .order_by(Evaluation.id.desc())
        .limit(1)
    )


def item_scores(stored: JsonObject, trait: str) -> dict[int, float]:
    """{eval item id: score} of one trait from an evaluation's `metrics["item_scores"]`."""
    return {int(i): float(v) for i, v in stored.get(trait, [])}


def _zdr_refusal() -> ApiError:
    return ApiError(
        409,
        "zero_data_retention",
        "Under zero-data-retention no labelled text is kept, evaluation items neither.",
    )


def add_items(ctx: Resources, who: Principal, handle: str, items: list[LabelIn]) -> EvalAdded:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        if model.zero_data_retention:
            raise _zdr_refusal()
        refs = TraitRefs(s, model)
        authors = label_authors(s, who, [x.annotator for x in items], "items")
        keys: list[ItemKey] = [
            (refs.find(x.trait, ("body", "items", i, "trait")).key, sha256(x.text), float(x.quality), author)
            for i, (x, author) in enumerate(zip(items, authors, strict=True))
        ]
        # Each annotator's item is a vote of its own: the same text from two annotators is two items.
        stored = _stored_items(s, model.id, keys)  # re-importing a file adds nothing
        gold = gold_digests(s, model.id, {k[1] for k in keys})  # checks people, never a version
        left_out: list[int] = []
        new: dict[ItemKey, dict[str, object]] = {}  # rows to insert
        now = utcnow()
        duplicates: list[int] = []  # items that add nothing: in the set, or earlier in the request
        for i, (item, key) in enumerate(zip(items, keys, strict=True)):
            if key[1] in gold:
                left_out.append(i)
            elif key in stored or key in new:
                duplicates.append(i)
            else:
                trait_key, digest, quality, annotator = key
                new[key] = {
                    "model_id": model.id,
                    "trait_key": trait_key,
                    "text": item.text,
                    "quality": quality,
                    "content_sha256": digest,
                    "annotator": annotator,
                    "created_at": now,
                }
        chars = quotas.chars_of(str(row["text"]) for row in new.values())
        quotas.require_namespace_room(s, ctx.settings, model.namespace, chars)
        if new:
            s.execute(insert(EvalItem), list(new.values()))
            before = model.eval_item_count
            model.eval_item_count += len(new)  # the row is locked (load_model): no lost update
            analyze_after_growth(s, EvalItem.__tablename__, before, model.eval_item_count)
        added: JsonObject = {"added": len(new), "duplicates": len(duplicates), "total": model.eval_item_count}
        audit.record(s, who, "evaluation_set_changed", model.namespace, model, added)
        # Said when the overlap appears: these texts are left out of labelling and training from now on.
        texts = {key[1] for key in keys} - {keys[i][1] for i in left_out}
        return EvalAdded(
            added=len(new),
            total=model.eval_item_count,
            duplicates=duplicates,
            gold_texts=left_out,
            in_pool=len(pool_digests(s, model.id, texts)),
            in_samples=len(sample_digests(s, model.id, texts)),
        )


def held_out_labels(s: Session, model_id: int) -> frozenset[tuple[str, str]]:
    """(trait key, content hash) of the labels training leaves out as labels of the evaluation set's texts:
    a label of any trait on such a text, whichever was stored first (a sample of the text is kept, as a
    vote and a record, and never trained on; docs/api/versions.md, "The evaluation set is held out")."""
    texts = evaluation_texts(s, model_id)
    if not texts:
        return frozenset()
    keys = list(s.scalars(select(Trait.key).where(Trait.model_id == model_id)))
    return frozenset((key, digest) for key in keys for digest in texts)


def _stored_items(s: Session, model_id: int, keys: list[ItemKey]) -> set[ItemKey]:
    """The keys among `keys` that the model's set holds: per trait, one indexed query per chunk of hashes, so
    a batch costs the same whatever the set holds."""
    prefixes: dict[str, set[str]] = {}
    for trait_key, digest, *_ in keys:
        prefixes.setdefault(trait_key, set()).add(key_of(digest))
    found: set[ItemKey] = set()  # with any other text's that shares a key: never asked for
    for trait_key, wanted in prefixes.items():
        ordered = sorted(wanted)
        for start in range(0, len(ordered), CHUNK):
            found.update(
                s.execute(
                    select(
                        EvalItem.trait_key, EvalItem.content_sha256, EvalItem.quality, EvalItem.annotator
                    ).where(
                        EvalItem.model_id == model_id,
                        EvalItem.trait_key == trait_key,
                        content_key(EvalItem.content_sha256).in_(ordered[start : start + CHUNK]),
                    )
                ).tuples()
            )
    return found


def get_set(ctx: Databases, who: Principal, handle: str) -> EvalSetOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        pole = pole_sql(EvalItem.quality)
        rows = s.execute(
            select(EvalItem.trait_key, pole, func.count())
            .where(EvalItem.model_id == model.id)
            .group_by(EvalItem.trait_key, pole)
        ).all()
    traits: dict[str, EvalTraitCounts] = {}
    for key, side, count in rows:
        entry = traits.setdefault(key, EvalTraitCounts(positive=0, negative=0, neutral=0))
        setattr(entry, side, count)
    return EvalSetOut(handle=handle, total=sum(c for *_, c in rows), traits=dict(sorted(traits.items())))


def clear_set(ctx: Databases, who: Principal, handle: str) -> EvalDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        deleted = rows_changed(s, delete(EvalItem).where(EvalItem.model_id == model.id))
        model.eval_item_count = 0
        audit.record(s, who, "evaluation_set_changed", model.namespace, model, {"deleted": deleted})
        return EvalDeleted(handle=handle, deleted=deleted)


def start_evaluation(ctx: RunStarter, who: Principal, handle: str, ref: str) -> EvaluationStarted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        require(s, model, "evaluate")
        count = s.scalar(select(func.count()).select_from(EvalItem).where(EvalItem.model_id == model.id)) or 0
        if not count:
            raise ApiError(422, "no_evaluation_set", f"{handle} has no evaluation items: add some first.")
        run = ledger.create_run(s, model, "evaluate", {"version_no": version.version_no})
        audit.run_started(s, who, model, run.id, "evaluate", {"version_no": version.version_no})
        run_id, version_no = run.id, version.version_no
    ctx.enqueue(run_id)
    return EvaluationStarted(state="busy", run_id=run_id, version_no=version_no)


def get_evaluation(ctx: Databases, who: Principal, handle: str, ref: str) -> EvaluationOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        found = latest_evaluation(s, model.id, version.version_no)
        if found is None:
            raise ApiError(
                404, "evaluation_not_found", f"v{version.version_no} of {handle} was not evaluated yet."
            )
        return EvaluationOut(
            handle=model.handle,
            version_no=found.version_no,
            run_id=found.run_id,
            created_at=found.created_at,
            items=found.item_count,
            traits=found.metrics.get("traits", {}),
        )
