"""A model on both embedders (`blend`): one model trained on each embedder, a text scored by their scores'
mean.

Measured on the quality benchmark's draws (docs/benchmarks/quality-default.md), the mean of the two
models' scores beats either embedder alone on long English texts at every size, 8 labels a pole included, with
no out-of-fold comparison to make. Training fits each embedder's model exactly as a one-embedder training does
(the same samples, folds and search); the snapshot keeps both (`parts`) under the blend's embedder id, whose
vectors are the embedders' vectors side by side (core.embedders.blend); `Scorer` scores it by the mean
(core.engine.scorer).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import expit, logit

from core.engine import metrics as m
from core.engine.blend_snapshot import EMBEDDERS, dump_blend_snapshot, per_embedder
from core.engine.types import JsonObject, ProgressFn, TrainingResult, TraitSpec

#: Clip of a held-out score before its logit: a score of exactly 0 or 1 has no finite logit.
_TINY = 1e-12


def part_params(params: Mapping[str, Any] | None, i: int, parts: int) -> dict[str, Any] | None:
    """Of a version's reused parameters (per trait), those of the `i`th embedder of a blend of `parts`: a
    blend records each trait's as {"embedders": [one per embedder]} (`per_embedder`); one embedder's
    parameters are not reused by a blend."""
    if not params:
        return None
    out = {}
    for key, value in params.items():
        embedders = per_embedder(value)
        if embedders is not None and len(embedders) == parts:
            out[key] = embedders[i]
    return out or None


def one_embedder_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Of a version's reused parameters, those a one-embedder training can reuse (a blend's are left out)."""
    if not params:
        return None
    kept = {k: v for k, v in params.items() if per_embedder(v) is None}
    return kept or None


def train_blend(
    traits: Sequence[TraitSpec],
    samples: Sequence[Any],
    *,
    embedder: Any,
    params: Mapping[str, Any] | None = None,
    progress: ProgressFn | None = None,
    **options: Any,
) -> TrainingResult:
    """Train one model on each of `embedder.parts` (a `BlendEmbedder`: cheapest first) and return the blend:
    its snapshot holds both, its metrics are the blend's own out-of-fold figures (the mean of the two models'
    held-out scores on the same folds) with each embedder's beside them."""
    from core.engine.training import train

    parts = list(embedder.parts)
    results = []
    for i, part in enumerate(parts):

        def share(fraction: float, phase: str, i: int = i) -> None:
            if progress is not None:
                progress((i + fraction) / len(parts), phase)

        results.append(
            train(
                traits,
                samples,
                embedder=part,
                params=part_params(params, i, len(parts)),
                progress=share,
                **options,
            )
        )
    return combine(traits, results, embedder.id)


def combine(
    traits: Sequence[TraitSpec], results: Sequence[TrainingResult], embedder_id: str
) -> TrainingResult:
    """The blend of the embedders' trainings `results` (in the order of the blend's parts)."""
    keys = [t.key for t in traits]
    params = {k: {EMBEDDERS: [r.params.get(k) for r in results]} for k in keys}
    digest = hashlib.sha256("".join(r.param_hash for r in results).encode("ascii")).hexdigest()
    metrics: dict[str, JsonObject] = {}
    held_out: dict[str, tuple[Any, Any]] = {}
    slopes: list[float] = []
    for key in keys:
        first = dict(results[0].metrics.get(key, {}))
        embedders = [
            {
                "embedder": r.snapshot["embedder"]["id"],
                **{f: r.metrics.get(key, {}).get(f) for f in ("roc_auc", "roc_auc_se", "k", "params")},
            }
            for r in results
        ]
        figures = blend_figures([r.held_out.get(key) for r in results])
        slopes.append(1.0 if figures is None else float(figures[0]["k"]))
        if figures is not None:
            held_out[key] = figures[1]
        own = figures[0] if figures is not None else {"roc_auc": None, "roc_auc_se": None}
        # Counts and anchors are the first embedder's (the same samples); figures of one model are left out.
        for name in ("explained_variance", "k", "search", "label_agreement"):
            first.pop(name, None)
        metrics[key] = {**first, **own, "params": params[key], EMBEDDERS: embedders}
    snapshot = dump_blend_snapshot([r.snapshot for r in results], embedder_id, digest, slopes)
    return TrainingResult(
        snapshot=snapshot, metrics=metrics, param_hash=digest, params=params, held_out=held_out
    )


def blend_figures(
    held: Sequence[tuple[Any, Any] | None],
) -> tuple[JsonObject, tuple[Any, Any]] | None:
    """The blend's out-of-fold figures from each embedder's held-out scores (same folds, same samples): the
    mean of the embedders' logits, recalibrated by a slope `k` fitted on those held-out logits (a mean of
    calibrated scores is under-confident: it does not add up the evidence the two models share), measured as
    one model's are. None when an embedder had no folds."""
    from core.engine.training import auc_se, calibration_figures
    from core.engine.trait_model import fit_temperature

    if not held or any(h is None for h in held):
        return None
    q = np.asarray(held[0][1]) if held[0] is not None else np.zeros(0)
    z = np.mean([logit(np.clip(np.asarray(h[0]), _TINY, 1.0 - _TINY)) for h in held if h is not None], axis=0)
    k = fit_temperature(z, q, prior_k=1.0)  # each embedder's logits are calibrated: 1 unless shown otherwise
    scores = np.asarray(expit(k * z))
    figures: JsonObject = {
        "k": k,
        "roc_auc": m.cv_roc_auc(scores, q),
        "roc_auc_se": auc_se(scores, q),
        "accuracy": m.accuracy(scores, q),
        **calibration_figures(scores, q),
        "discrimination": m.discrimination(scores, q),
    }
    return figures, (scores, q)
