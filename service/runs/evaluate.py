"""Run kind evaluate: score the model's evaluation set with one version and store its metrics.

Items live in `eval_items`, which training never reads. The embeddings go through the embedding cache, so a
second version evaluated on the same set re-uses them and costs little more than the metrics. Items whose
text the version trained on anyway (a sample or feedback label of an evaluation text) are not held out from
it: they are left out of its metrics and its item scores, and counted (`excluded_trained`, per trait), by
the version's record of its training texts (service/store/heldout.py).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import select

from core import engine
from core.engine.errors import EngineError
from core.engine.votes import Vote, count_votes
from core.json_types import JsonObject
from service.domain.embedding import snapshot_embedder_id
from service.domain.evaluation import ceiling_fields
from service.runs.attempt import Attempt
from service.store import ledger
from service.store.db import transaction
from service.store.heldout import trained_mask
from service.store.schema import EvalItem, Evaluation, Model, Run, Version, utcnow

BATCH = 256


def execute(at: Attempt) -> None:
    from core.engine.evaluation import evaluate_trait  # SciPy: loaded by the first evaluation

    with transaction(at.reads) as s:
        run = s.get(Run, at.run_id)
        assert run is not None
        version_no = int(run.options["version_no"])
        found = s.execute(
            select(Version.snapshot, Version.trained_keys).where(
                Version.model_id == run.model_id, Version.version_no == version_no
            )
        ).first()
        items = s.execute(
            select(
                EvalItem.id,
                EvalItem.trait_key,
                EvalItem.text,
                EvalItem.quality,
                EvalItem.annotator,
                EvalItem.content_sha256,
            )
            .where(EvalItem.model_id == run.model_id)
            .order_by(EvalItem.id)
        ).all()
    if found is None:
        raise EngineError(f"version v{version_no} was pruned before it could be evaluated")
    snapshot, record = found
    scorer = engine.Scorer.from_snapshot(snapshot, embedder=at.embedders.get(snapshot_embedder_id(snapshot)))
    columns = {spec.key: i for i, spec in enumerate(scorer.traits)}
    of_version = [it for it in items if it.trait_key in columns]  # traits it does not have are skipped
    # Texts the version trained on are not held out from it: left out of its metrics, counted per trait.
    trained = (
        trained_mask(record, [it.content_sha256 for it in of_version])
        if record is not None
        else np.zeros(len(of_version), dtype=bool)
    )
    kept = [it for it, was in zip(of_version, trained, strict=True) if not was]
    left_out: dict[str, set[str]] = {}
    for it, was in zip(of_version, trained, strict=True):
        if was:
            left_out.setdefault(it.trait_key, set()).add(it.text)
    texts = list(dict.fromkeys(it.text for it in kept))  # each distinct text scored once
    rows: dict[str, np.ndarray] = {}
    for start in range(0, len(texts), BATCH):
        chunk = texts[start : start + BATCH]
        for text, row in zip(chunk, scorer.score(chunk), strict=True):
            rows[text] = np.asarray(row, dtype=float)
        done = min(len(texts), start + BATCH)
        at.report(0.9 * done / max(1, len(texts)), "scoring", f"Scored {done} of {len(texts)} texts")
    at.report(0.92, "metrics", "Computing metrics")
    traits: JsonObject = {}
    # Per item (id, score): what thresholds and the comparison of two versions are computed from.
    item_scores: dict[str, list[list[float]]] = {}
    for key, col in columns.items():
        mine = [it for it in kept if it.trait_key == key]
        # Null: the version has no record of what it trained on (trained before records were kept).
        excluded = {"excluded_trained": len(left_out.get(key, ())) if record is not None else None}
        if mine:
            # Metrics per text, its votes counted as training counts them (one vote per text: as before).
            counted = count_votes(
                Vote(key, it.text, it.quality, annotator=it.annotator, id=it.id) for it in mine
            )
            scores = np.array([rows[c.votes[0].text][col] for c in counted])
            quality = np.array([c.quality for c in counted])
            traits[key] = {**evaluate_trait(scores, quality), "votes": len(mine), **excluded}
            traits[key].update(
                ceiling_fields(counted, {c.text: float(v) for c, v in zip(counted, scores, strict=True)})
            )
            item_scores[key] = [[it.id, min(1.0, max(0.0, float(rows[it.text][col])))] for it in mine]
        elif key in left_out:  # every text of the trait was trained on: nothing to measure, and why
            traits[key] = {"items": 0, "votes": 0, "positive": 0, "negative": 0, **excluded}
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, f"Evaluated v{version_no} on {len(kept)} items"):
            return
        run = s.get(Run, at.run_id)
        assert run is not None  # succeed() just updated it
        model = s.get(Model, run.model_id)
        assert model is not None
        s.add(
            Evaluation(
                model_id=model.id,
                version_no=version_no,
                run_id=at.run_id,
                item_count=len(kept),
                metrics={"traits": traits, "item_scores": item_scores},
                created_at=utcnow(),
            )
        )
        # Back where it started: `ready`, or a reopened draft (its edits go on while v N is evaluated).
        model.state = ledger.state_after(model, run, succeeded=True)
        model.updated_at = utcnow()
