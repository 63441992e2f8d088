"""Two versions compared on the evaluation set: metrics side by side and the items they disagree on."""

from __future__ import annotations

import numpy as np

from core.contract import decision_threshold
from core.engine.votes import count_votes
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.evaluation import CEILING_FIELDS, item_scores, stored_evaluation
from service.domain.needs import Databases
from service.domain.versions import resolve_version
from service.schemas.eval_compare import ComparedRun, Disagreement, EvalCompareOut
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.votes import eval_votes


def compare_evaluations(
    ctx: Databases, who: Principal, handle: str, a: str, b: str, limit: int
) -> EvalCompareOut:
    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        va, vb = resolve_version(s, model, a), resolve_version(s, model, b)
        ea, eb = stored_evaluation(s, model, va), stored_evaluation(s, model, vb)
        votes = eval_votes(s, model.id)
        thresholds_a, thresholds_b = va.thresholds or {}, vb.thresholds or {}
        out_a = ComparedRun(version_no=va.version_no, run_id=ea.run_id)
        out_b = ComparedRun(version_no=vb.version_no, run_id=eb.run_id)
        stored_a, stored_b = ea.metrics["item_scores"], eb.metrics["item_scores"]
        traits_a, traits_b = ea.metrics.get("traits", {}), eb.metrics.get("traits", {})
    from core.engine.comparison import compare_trait  # SciPy: loaded by the first comparison

    traits: dict[str, JsonObject] = {}
    rows: list[Disagreement] = []
    for key in sorted(set(stored_a) & set(stored_b)):
        sa, sb = item_scores(stored_a, key), item_scores(stored_b, key)
        # Per text, the votes scored by both and still in the set counted (one vote per text: per item).
        counted = count_votes(v for v in votes if v.id in sa and v.id in sb)
        if not counted:
            continue
        ids = [c.votes[0].id for c in counted]
        quality = np.array([c.quality for c in counted])
        xa, xb = np.array([sa[i] for i in ids]), np.array([sb[i] for i in ids])
        traits[key] = compare_trait(
            quality,
            xa,
            xb,
            threshold_a=decision_threshold(thresholds_a, key),
            threshold_b=decision_threshold(thresholds_b, key),
        )
        # The human ceiling beside each version's agreement, as each evaluation measured them, and the texts
        # each left out as trained on (the items compared are those both held out).
        for field in (*CEILING_FIELDS, "excluded_trained"):
            traits[key][f"{field}_a"] = (traits_a.get(key) or {}).get(field)
            traits[key][f"{field}_b"] = (traits_b.get(key) or {}).get(field)
        rows += [
            Disagreement(
                item_id=i,
                trait=key,
                text=c.text,
                quality=c.quality,
                score_a=round(x, 6),
                score_b=round(y, 6),
                difference=round(y - x, 6),
            )
            for i, c, x, y in zip(ids, counted, xa.tolist(), xb.tolist(), strict=True)
        ]
    rows.sort(key=lambda r: (-abs(r.difference), r.item_id))
    return EvalCompareOut(
        handle=handle,
        a=out_a,
        b=out_b,
        items=sum(t["items"] for t in traits.values()),
        traits=traits,
        disagreements=rows[:limit],
    )
