"""A model on both bodies (`blend`): one model trained on each body, a text scored by their scores' mean.

Measured on the quality benchmark's draws (docs/benchmarks/quality.md, "Both bodies"), the mean of the two
models' scores beats either body alone on long English texts at every size, 8 labels a pole included, with no
out-of-fold comparison to make. Training fits each body's model exactly as a one-body training does (the same
samples, folds and search); the snapshot keeps both (`parts`) under the blend's embedder id, whose vectors are
the bodies' vectors side by side (core.embedders.blend); `Scorer` scores it by the mean (core.engine.scorer).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.engine import metrics as m
from core.engine.errors import SnapshotFormatError
from core.engine.types import JsonObject, ProgressFn, TrainingResult, TraitSpec

#: The snapshot's `scoring_method` of a blend: an engine from before it refuses the snapshot by name instead
#: of scoring its halves as one model.
BLEND_METHOD = "blend_of_bodies"
PREFIX = "blend:"


def blend_id(part_ids: Sequence[str]) -> str:
    """The embedder id of the blend of these bodies (in this order)."""
    return PREFIX + "+".join(part_ids)


def is_blend(snapshot: Mapping[str, Any]) -> bool:
    return snapshot.get("scoring_method") == BLEND_METHOD


def is_blend_id(embedder_id: str) -> bool:
    return embedder_id.startswith(PREFIX)


def part_params(params: Mapping[str, Any] | None, i: int, parts: int) -> dict[str, Any] | None:
    """Of a version's reused parameters (per trait), those of the `i`th body of a blend of `parts`: a blend
    records each trait's as {"bodies": [one per body]}; one body's parameters are not reused by a blend."""
    if not params:
        return None
    out = {}
    for key, value in params.items():
        bodies = value.get("bodies") if isinstance(value, Mapping) else None
        if isinstance(bodies, list) and len(bodies) == parts:
            out[key] = bodies[i]
    return out or None


def one_body_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Of a version's reused parameters, those a one-body training can reuse (a blend's are left out)."""
    if not params:
        return None
    kept = {k: v for k, v in params.items() if not (isinstance(v, Mapping) and "bodies" in v)}
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
    held-out scores on the same folds) with each body's beside them."""
    from core.engine.training import train

    parts = list(embedder.parts)
    results = []
    for i, body in enumerate(parts):

        def share(fraction: float, phase: str, i: int = i) -> None:
            if progress is not None:
                progress((i + fraction) / len(parts), phase)

        results.append(
            train(
                traits,
                samples,
                embedder=body,
                params=part_params(params, i, len(parts)),
                progress=share,
                **options,
            )
        )
    return combine(traits, results, embedder.id)


def combine(
    traits: Sequence[TraitSpec], results: Sequence[TrainingResult], embedder_id: str
) -> TrainingResult:
    """The blend of the bodies' trainings `results` (in the order of the blend's parts)."""
    keys = [t.key for t in traits]
    params = {k: {"bodies": [r.params.get(k) for r in results]} for k in keys}
    digest = hashlib.sha256("".join(r.param_hash for r in results).encode("ascii")).hexdigest()
    snapshot = dump_blend_snapshot([r.snapshot for r in results], embedder_id, digest)
    metrics: dict[str, JsonObject] = {}
    held_out: dict[str, tuple[Any, Any]] = {}
    for key in keys:
        first = dict(results[0].metrics.get(key, {}))
        bodies = [
            {
                "embedder": r.snapshot["embedder"]["id"],
                **{f: r.metrics.get(key, {}).get(f) for f in ("roc_auc", "roc_auc_se", "k", "params")},
            }
            for r in results
        ]
        figures = blend_figures([r.held_out.get(key) for r in results])
        if figures is not None:
            held_out[key] = figures[1]
        own = figures[0] if figures is not None else {"roc_auc": None, "roc_auc_se": None}
        # Counts and anchors are the first body's (the same samples); figures of one model are left out.
        for name in ("explained_variance", "k", "search", "label_agreement"):
            first.pop(name, None)
        metrics[key] = {**first, **own, "params": params[key], "bodies": bodies}
    return TrainingResult(
        snapshot=snapshot, metrics=metrics, param_hash=digest, params=params, held_out=held_out
    )


def blend_figures(
    held: Sequence[tuple[Any, Any] | None],
) -> tuple[JsonObject, tuple[Any, Any]] | None:
    """The blend's out-of-fold figures from each body's held-out scores (same folds, same samples): the mean
    of the bodies' scores measured as one model's are. None when a body had no folds."""
    from core.engine.training import auc_se

    if not held or any(h is None for h in held):
        return None
    scores = np.mean([np.asarray(h[0]) for h in held if h is not None], axis=0)
    q = np.asarray(held[0][1]) if held[0] is not None else np.zeros(0)
    figures: JsonObject = {
        "roc_auc": m.cv_roc_auc(scores, q),
        "roc_auc_se": auc_se(scores, q),
        "accuracy": m.accuracy(scores, q),
        "calibration_error": float(m.expected_calibration_error(scores.ravel(), np.tile(q, len(scores)))),
        "discrimination": m.discrimination(scores, q),
    }
    return figures, (scores, q)


def dump_blend_snapshot(parts: Sequence[JsonObject], embedder_id: str, param_hash: str) -> JsonObject:
    """The snapshot of a blend: the traits as every part names them, and each part's whole snapshot."""
    from core.engine.snapshot import CHUNK_WORDS, FORMAT, FORMAT_VERSION

    fields = ("key", "name", "positive_label", "negative_label", "description", "aggregation")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scoring_method": BLEND_METHOD,
        "embedder": {
            "id": embedder_id,
            "dim": sum(int(p["embedder"]["dim"]) for p in parts),
            "model_sha256": None,
        },
        "param_hash": param_hash,
        "chunk_words": parts[0].get("chunk_words", CHUNK_WORDS),
        "traits": [{f: t[f] for f in fields} for t in parts[0]["traits"]],
        "parts": [dict(p) for p in parts],
    }


def check_blend(snapshot: Mapping[str, Any], load: Any) -> None:
    """Validate a blend snapshot's parts (each a one-body snapshot, checked by `load`) against its top level:
    the blend's id names the parts' ids in order, their dimensions add up, the traits and chunking agree."""

    def fail(message: str) -> SnapshotFormatError:
        return SnapshotFormatError(f"invalid snapshot: {message}")

    parts = snapshot.get("parts")
    if not isinstance(parts, list) or len(parts) < 2:
        raise fail("a blend's parts must be a list of at least two snapshots")
    loaded = [load(p) for p in parts]
    if any(is_blend(p) for p in loaded):
        raise fail("a blend's part must be a one-body snapshot")
    embedder = snapshot["embedder"]
    ids = [p["embedder"]["id"] for p in loaded]
    if embedder["id"] != blend_id(ids):
        raise fail(f"embedder.id {embedder['id']!r} does not name its parts' bodies {ids}")
    if embedder["dim"] != sum(p["embedder"]["dim"] for p in loaded):
        raise fail("embedder.dim must be the sum of its parts' dims")
    keys = [t.get("key") if isinstance(t, dict) else None for t in snapshot["traits"]]
    for i, p in enumerate(loaded):
        if [t["key"] for t in p["traits"]] != keys:
            raise fail(f"parts[{i}] must have the blend's traits, in its order")
        if p.get("chunk_words") != snapshot.get("chunk_words"):
            raise fail(f"parts[{i}].chunk_words must be the blend's")
