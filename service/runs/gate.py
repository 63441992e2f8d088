"""A retraining the labels started keeps its version only when it is no worse than the serving one.

Automatic retraining (a full feedback buffer) happens with no one looking, so before its version becomes
current it is compared with the serving version on the model's evaluation set, by the paired test the
Versions page runs (`core.engine.comparison.compare_trait`: ROC-AUC by DeLong's test, else accuracy by a
paired bootstrap). When either measure is significantly lower on a trait (its 95% interval of new − serving
lies below 0) the run fails with `worse_than_current` and the figures: no version, the buffer kept, the
serving version unchanged. A model without an evaluation set (or a version to compare with) is not gated;
a training someone asked for never is.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from sqlalchemy import select

from core import engine
from core.contract import decision_threshold
from core.engine.errors import EngineError
from core.engine.votes import Vote, count_votes
from core.json_types import JsonObject
from service.domain.embedding import snapshot_embedder_id
from service.domain.scoring import AUTOMATIC
from service.runs.attempt import Attempt
from service.store.db import transaction
from service.store.schema import EvalItem, Model, Version


class WorseThanCurrent(EngineError):
    code = "worse_than_current"


def _scorer(at: Attempt, snapshot: JsonObject) -> engine.Scorer:
    return engine.Scorer.from_snapshot(snapshot, embedder=at.embedders.get(snapshot_embedder_id(snapshot)))


def gated(options: JsonObject) -> bool:
    """Whether a run's version must pass the check: a retraining that labels started."""
    return options.get("triggered_by") == AUTOMATIC


def require_no_worse(at: Attempt, model_id: int, snapshot: JsonObject, trained: Collection[str]) -> None:
    """Raise WorseThanCurrent when the new version (`snapshot`, trained on the texts `trained`) is
    significantly worse than the serving one on any trait of the evaluation set's held-out items."""
    from core.engine.comparison import compare_trait  # SciPy: loaded by the first comparison

    with transaction(at.reads) as s:
        model = s.get(Model, model_id)
        assert model is not None
        current = s.execute(
            select(Version.version_no, Version.snapshot, Version.thresholds).where(
                Version.id == model.current_version_id
            )
        ).first()
        items = s.execute(
            select(EvalItem.id, EvalItem.trait_key, EvalItem.text, EvalItem.quality, EvalItem.annotator)
            .where(EvalItem.model_id == model_id)
            .order_by(EvalItem.id)
        ).all()
    held = [it for it in items if it.text not in trained]  # an item trained on is not held out
    if current is None or not held:
        return
    version_no, serving_snapshot, thresholds = current
    serving = engine.Scorer.from_snapshot(
        serving_snapshot, embedder=at.embedders.get(snapshot_embedder_id(serving_snapshot))
    )
    candidate = engine.Scorer.from_snapshot(
        snapshot, embedder=at.embedders.get(snapshot_embedder_id(snapshot))
    )
    at.report(0.96, "checking", f"Comparing with v{version_no} on the evaluation set")
    texts = list(dict.fromkeys(it.text for it in held))
    columns_a = {spec.key: i for i, spec in enumerate(serving.traits)}
    columns_b = {spec.key: i for i, spec in enumerate(candidate.traits)}
    rows_a = dict(zip(texts, np.asarray(serving.score(texts), dtype=float), strict=True))
    rows_b = dict(zip(texts, np.asarray(candidate.score(texts), dtype=float), strict=True))
    worse: list[str] = []
    for key in sorted(set(columns_a) & set(columns_b)):
        counted = count_votes(
            Vote(key, it.text, it.quality, annotator=it.annotator, id=it.id)
            for it in held
            if it.trait_key == key
        )
        if not counted:
            continue
        quality = np.array([c.quality for c in counted])
        xa = np.array([rows_a[c.votes[0].text][columns_a[key]] for c in counted])
        xb = np.array([rows_b[c.votes[0].text][columns_b[key]] for c in counted])
        # Each version at its own threshold: the serving one's was chosen on its scores, and the new version
        # serves at none set (the default) until someone chooses one on its evaluation.
        figures = compare_trait(
            quality,
            xa,
            xb,
            threshold_a=decision_threshold(thresholds, key),
            threshold_b=decision_threshold(None, key),
        )
        for measure in ("roc_auc", "accuracy"):
            m = figures.get(measure)
            if m and m["significant"] and m["difference"] < 0:
                worse.append(
                    f"{key}: {measure} {m['b']:.3f} against v{version_no}'s {m['a']:.3f} "
                    f"(difference {m['difference']:+.3f}, 95% interval {m['ci_low']:+.3f} to "
                    f"{m['ci_high']:+.3f}, p = {m['p_value']:.3g}, {figures['items']} items)"
                )
                break
    if worse:
        raise WorseThanCurrent(
            f"The retraining the buffered labels started is worse than v{version_no} on the evaluation "
            f"set, so v{version_no} keeps serving and the labels stay buffered: {'; '.join(worse)}."
        )
