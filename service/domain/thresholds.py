"""Decision thresholds of a version, per trait: its PR curve on the evaluation set, and chosen thresholds."""

from __future__ import annotations

from core.engine.poles import pole_signs
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.evaluation import labelled_scores, stored_evaluation
from service.domain.needs import Databases
from service.domain.states import require_not_archived
from service.domain.versions import resolve_version
from service.errors import ApiError
from service.schemas.thresholds import (
    PrCurveOut,
    PrPoint,
    PrTrait,
    ThresholdDeleted,
    ThresholdIn,
    ThresholdOut,
    ThresholdsOut,
)
from service.store import audit
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.schema import utcnow


def get_pr_curve(ctx: Databases, who: Principal, handle: str, ref: str) -> PrCurveOut:
    from core.engine.thresholds import pr_curve  # scikit-learn: loaded by the first curve

    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        found = stored_evaluation(s, model, version)
        traits: dict[str, PrTrait] = {}
        for key in sorted(found.metrics["item_scores"]):
            scores, quality = labelled_scores(s, found, key)
            if len(scores):
                signs = pole_signs(quality)
                traits[key] = PrTrait(
                    positive=int((signs > 0).sum()),
                    negative=int((signs < 0).sum()),
                    neutral=int((signs == 0).sum()),  # on neither pole: left out of the curve
                    points=[PrPoint(**p) for p in pr_curve(scores, quality)],
                )
        return PrCurveOut(
            handle=model.handle, version_no=version.version_no, run_id=found.run_id, traits=traits
        )


def get_thresholds(ctx: Databases, who: Principal, handle: str, ref: str) -> ThresholdsOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        version = resolve_version(s, model, ref)
        stored = version.thresholds or {}
        return ThresholdsOut(
            handle=model.handle,
            version_no=version.version_no,
            thresholds={k: ThresholdOut(**v) for k, v in sorted(stored.items())},
        )


def set_threshold(
    ctx: Databases, who: Principal, handle: str, ref: str, trait: str, payload: ThresholdIn
) -> ThresholdOut:
    from core.engine.thresholds import choose_threshold  # scikit-learn: loaded by the first choice

    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)  # locks the model row: one threshold write at a time
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        found = stored_evaluation(s, model, version)
        scores, quality = labelled_scores(s, found, trait)
        if not len(scores):
            raise ApiError(
                422,
                "trait_not_evaluated",
                f"v{version.version_no} has no evaluated items of trait {trait!r}: "
                "add evaluation items of it and evaluate the version.",
            )
        chosen = choose_threshold(scores, quality, payload.target, payload.value)
        if chosen is None:
            raise ApiError(
                422,
                "target_unreachable",
                f"No threshold reaches {payload.target} {payload.value} for {trait!r} on the evaluation set "
                "(it needs positive and negative items, and a reachable target).",
            )
        entry = ThresholdOut(
            trait=trait,
            target=payload.target,
            value=payload.value,
            run_id=found.run_id,
            items=len(scores),
            set_at=utcnow().isoformat(),
            threshold=round(chosen["threshold"], 6),  # as scores are returned: decision = score ≥ threshold
            precision=chosen["precision"],
            recall=chosen["recall"],
        )
        before = (version.thresholds or {}).get(trait)
        version.thresholds = {**(version.thresholds or {}), trait: entry.model_dump()}  # a new dict: tracked
        detail: JsonObject = {
            "version_no": version.version_no,
            "trait": trait,
            "from": before["threshold"] if isinstance(before, dict) else None,
            "to": entry.threshold,
            "target": payload.target,
            "value": payload.value,
        }
        audit.record(s, who, "threshold_changed", model.namespace, model, detail)
        return entry


def delete_threshold(ctx: Databases, who: Principal, handle: str, ref: str, trait: str) -> ThresholdDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        require_not_archived(model)
        version = resolve_version(s, model, ref)
        stored = dict(version.thresholds or {})
        gone = stored.pop(trait, None)
        deleted = gone is not None
        if deleted:
            version.thresholds = stored or None
            before = gone["threshold"] if isinstance(gone, dict) else None
            detail: JsonObject = {"version_no": version.version_no, "trait": trait}
            detail |= {"from": before, "to": None}
            audit.record(s, who, "threshold_changed", model.namespace, model, detail)
        return ThresholdDeleted(
            handle=model.handle, version_no=version.version_no, trait=trait, deleted=deleted
        )
