"""Discovery: intrinsic trait axes derived from a model's pooled samples.

The texts of every labelled sample are pooled, de-duplicated and embedded. Candidate
axes are the leading principal components of the centred embeddings plus contrasts
between k-means centroids; `effort` sets how many of each are considered. A candidate
scores `explained variance x separation` (how much of the embedding variance lies along
it, times how cleanly the texts projected on it split into two groups). The best
candidates that are not nearly parallel to an existing trait's axis, nor to one chosen
before, become up to three traits, named from the phrases that set their two ends apart (class-based TF-IDF,
`core.engine.pole_phrases`), their descriptions quoting each end's most typical texts.

Texts are sorted before anything is computed and every estimator is seeded, so the same
samples (in any order) and effort give the same traits. See docs/discovery-synthesis.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits  # scikit-learn's own dependency

from core.contract import (
    MAX_DISCOVERED_TRAITS,
    MAX_LABEL_CHARS,
    trait_key,
    unique_trait_key,
)
from core.embedders.base import Embedder
from core.engine.errors import EngineError, InvalidEffortError, TooFewTextsError
from core.engine.pole_phrases import pole_phrases
from core.engine.poles import pole_signs
from core.engine.text_utils import dedup_key
from core.engine.trait_model import AxisSpectrum
from core.engine.types import DiscoveredTrait, ProgressFn, Sample, TraitSpec
from core.engine.validation import validate_quality, validate_text

#: Principal components considered per effort level (and at most this many k-means contrasts).
CANDIDATES_BY_EFFORT: dict[str, int] = {"low": 4, "medium": 8, "high": 16, "xhigh": 32, "max": 64}
#: Largest k for the k-means contrasts per effort level (every centroid pair for k = 2..max_k).
KMEANS_MAX_K: dict[str, int] = {"low": 2, "medium": 3, "high": 4, "xhigh": 6, "max": 8}
#: Leading principal components the k-means clustering runs on.
KMEANS_DIMS = 32
MIN_TEXTS = 10
MIN_EXEMPLARS_PER_POLE = 5
MAX_EXEMPLARS_PER_POLE = 50
#: A candidate with |cos| above this to an existing or already chosen axis says nothing new.
PARALLEL_COS = 0.8
_SEED = 0
_LABEL_WORDS = 3  # phrases in a pole label: a pole is named by what most of its texts say, not one topic
_NAME_WORDS = 2  # phrases of each pole in a trait's name
_DESCRIPTION_WORDS = 5  # phrases per pole in the description
_TYPICAL_TEXTS = 2  # texts quoted per pole in the description
_QUOTE_CHARS = 160

ExistingTrait = TraitSpec | tuple[TraitSpec, np.ndarray | Sequence[float] | None]


@dataclass(frozen=True)
class _Candidate:
    axis: np.ndarray  # unit vector in embedding space, sign fixed
    explained: float  # fraction of the embedding variance along the axis
    separation: float  # between-group share of the projection variance at the best two-group split
    order: int  # generation order, the tie-breaker

    @property
    def score(self) -> float:
        return self.explained * self.separation


def _check_effort(effort: str) -> None:
    if effort not in CANDIDATES_BY_EFFORT:
        raise InvalidEffortError(
            f"unknown effort {effort!r}; expected one of {', '.join(CANDIDATES_BY_EFFORT)}"
        )


def pooled_texts(samples: Iterable[Sample]) -> list[str]:
    """The distinct texts of `samples`, stripped and sorted (input order never matters).

    Texts equal up to case, punctuation and spacing count once (the first in sorted order stays).
    """
    by_key: dict[str, str] = {}
    for text in sorted({s.text.strip() for s in samples if s.text and s.text.strip()}):
        by_key.setdefault(dedup_key(text), text)
    return sorted(by_key.values())


def _unit(v: np.ndarray) -> np.ndarray | None:
    norm = float(np.linalg.norm(v))
    return None if norm < 1e-12 else v / norm


def _fix_sign(axis: np.ndarray) -> np.ndarray:
    """Sign convention: the coordinate of largest magnitude (first one on ties) is positive."""
    return axis if axis[int(np.argmax(np.abs(axis)))] >= 0 else -axis


def _separation(proj: np.ndarray, min_group: int) -> float:
    """Best two-group split of 1-D projections (Otsu): between-group variance / total variance."""
    n = proj.size
    total = float(np.var(proj)) * n
    if total <= 0 or n < 2 * min_group:
        return 0.0
    p = np.sort(proj)
    csum = np.cumsum(p)
    sizes = np.arange(1, n)  # size of the lower group for a split after index i
    lo_mean = csum[:-1] / sizes
    hi_mean = (csum[-1] - csum[:-1]) / (n - sizes)
    between = sizes * (n - sizes) / n * (hi_mean - lo_mean) ** 2
    valid = (sizes >= min_group) & (n - sizes >= min_group)
    return float(np.clip(between[valid].max() / total, 0.0, 1.0))


def _candidates(x: np.ndarray, effort: str, progress: ProgressFn | None) -> list[_Candidate]:
    n, dim = x.shape
    centred = x - x.mean(axis=0)
    total_var = float((centred**2).sum()) / n
    if total_var <= 1e-12:
        return []
    n_pca = min(CANDIDATES_BY_EFFORT[effort], n - 1, dim)
    n_fit = min(max(n_pca, KMEANS_DIMS), n - 1, dim)
    raw: list[np.ndarray] = []
    # Full SVD: exact and deterministic (no randomised solver).
    pca = PCA(n_components=n_fit, svd_solver="full").fit(centred)
    raw.extend(pca.components_[:n_pca])
    _report(progress, 0.45, "searching")
    # k-means contrasts catch group structure that several components share. Clustering runs on
    # the leading components (denoised and much faster than all dimensions); each contrast is the
    # difference of two clusters' means in the full space. Each cluster needs room for a pole's
    # exemplars.
    reduced = pca.transform(centred)
    max_k = min(KMEANS_MAX_K[effort], n // MIN_EXEMPLARS_PER_POLE)
    contrasts: list[np.ndarray] = []
    for k in range(2, max_k + 1):
        labels = KMeans(n_clusters=k, n_init=4, max_iter=100, random_state=_SEED).fit_predict(reduced)
        means = [centred[labels == c].mean(axis=0) for c in range(k) if np.any(labels == c)]
        contrasts.extend(means[i] - means[j] for i in range(len(means)) for j in range(i + 1, len(means)))
    raw.extend(contrasts[: CANDIDATES_BY_EFFORT[effort]])
    _report(progress, 0.6, "searching")

    min_group = max(2, min(MIN_EXEMPLARS_PER_POLE, n // 4))
    out: list[_Candidate] = []
    for order, vec in enumerate(raw):
        unit = _unit(np.asarray(vec, dtype=np.float64))
        if unit is None:
            continue
        axis = _fix_sign(unit)
        proj = centred @ axis
        out.append(
            _Candidate(
                axis=axis,
                explained=float(np.var(proj)) / total_var,
                separation=_separation(proj, min_group),
                order=order,
            )
        )
    return out


def _existing_axes(
    existing: Iterable[ExistingTrait],
    samples: Sequence[Sample],
    embedder: Embedder,
    rows: dict[str, np.ndarray],
) -> tuple[list[np.ndarray], set[str]]:
    """Axes of the traits discovery must not rediscover, and their keys.

    An entry is a `TraitSpec` or `(TraitSpec, axis or None)`. Without an axis it is derived:
    the `balanced_cosine` prototype axis (shrinkage 1) of the trait's own pole samples among
    `samples` (neutral ones define neither pole) when they cover both poles, else the difference
    of the embeddings of its positive and negative labels. `rows` maps a pooled text's `dedup_key`
    to its embedding.
    """
    axes: list[np.ndarray] = []
    keys: set[str] = set()
    for entry in existing:
        spec, given = (entry, None) if isinstance(entry, TraitSpec) else entry
        keys.add(spec.key)
        if given is not None:
            vec = np.asarray(given, dtype=np.float64).ravel()
            if vec.size != embedder.dim:
                raise EngineError(
                    f"axis of existing trait {spec.key!r} has {vec.size} dimensions, "
                    f"the embedder {embedder.id!r} has {embedder.dim}"
                )
        else:
            # Its pole samples: a neutral one (quality 0.5) defines neither pole.
            own = [s for s in samples if s.trait == spec.key and dedup_key(s.text.strip()) in rows]
            own = [s for s, sign in zip(own, pole_signs([s.quality for s in own]), strict=True) if sign]
            q = np.array([s.quality for s in own], dtype=np.float64)
            if own and len(set(pole_signs(q).tolist())) == 2:
                x = np.stack([rows[dedup_key(s.text.strip())] for s in own])
                vec = AxisSpectrum.from_data(x, q).axis(1.0)[0]
            else:
                e = embedder.encode([spec.positive_label, spec.negative_label]).astype(np.float64)
                vec = e[0] - e[1]
        unit = _unit(np.asarray(vec, dtype=np.float64))
        if unit is not None:
            axes.append(unit)
    return axes, keys


def _redundant(axis: np.ndarray, other: np.ndarray, centred: np.ndarray) -> bool:
    """Nearly parallel to `other`: as directions (|cos|), or in how they order these texts (|corr|).

    The second test matters for k-means contrasts: two contrasts can differ in direction by
    more than the threshold yet split the texts the same way.
    """
    if abs(float(axis @ other)) > PARALLEL_COS:
        return True
    a, b = centred @ axis, centred @ other
    sa, sb = float(a.std()), float(b.std())
    if sa < 1e-12 or sb < 1e-12:
        return False
    return abs(float(np.mean((a - a.mean()) * (b - b.mean())) / (sa * sb))) > PARALLEL_COS


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1].rstrip() + "…"


def _typical(x: np.ndarray, group: np.ndarray, n: int) -> list[int]:
    """The `n` texts of `group` nearest its mean (cosine): the end's most typical, not its outliers."""
    unit = x[group] / np.maximum(np.linalg.norm(x[group], axis=1, keepdims=True), 1e-12)
    centre = unit.mean(axis=0)
    return [int(group[i]) for i in np.argsort(-(unit @ centre), kind="stable")[:n]]


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1].rstrip() + "…"}"'


def _make_spec(
    index: int,
    pos_words: list[str],
    neg_words: list[str],
    explained: float,
    n_texts: int,
    taken: set[str],
    typical: tuple[list[str], list[str]] = ([], []),
) -> TraitSpec:
    pos_label = ", ".join(pos_words[:_LABEL_WORDS]) or f"high end of axis {index}"
    neg_label = ", ".join(neg_words[:_LABEL_WORDS]) or f"low end of axis {index}"
    # Two axes of one run (or an existing trait) can share their top words: take the next distinctive
    # phrases rather than show two traits with the same name.
    names = [
        f"{' & '.join(pos_words[i : i + _NAME_WORDS])} vs {' & '.join(neg_words[i : i + _NAME_WORDS])}"
        for i in range(min(len(pos_words), len(neg_words)))
    ] or [f"axis {index}"]
    name = next((n for n in names if trait_key(n) not in taken), names[0])
    key = unique_trait_key(trait_key(name), taken)
    if key != trait_key(name):
        name = f"{name} ({key.rsplit('_', 1)[-1]})"
    taken.add(key)
    description = (
        f"Discovered from {n_texts} texts: {', '.join(pos_words) or 'no distinctive words'} at the "
        f"positive end versus {', '.join(neg_words) or 'no distinctive words'} at the negative end; "
        f"{explained:.1%} of the embedding variance lies along it."
    )
    for end, quotes in zip(("positive", "negative"), typical, strict=True):
        if quotes:
            description += f" Typical of the {end} end: {'; '.join(_quote(q) for q in quotes)}."
    return TraitSpec(
        key=key,
        name=_clip(name),
        positive_label=_clip(pos_label),
        negative_label=_clip(neg_label),
        description=description,
    )


def _report(progress: ProgressFn | None, fraction: float, phase: str) -> None:
    if progress is not None:
        progress(fraction, phase)


def discover(
    samples: Iterable[Sample],
    *,
    embedder: Embedder,
    effort: str = "medium",
    existing: Iterable[ExistingTrait] = (),
    progress: ProgressFn | None = None,
) -> list[DiscoveredTrait]:
    """Up to three intrinsic traits of the pooled `samples`, best first.

    `existing`: traits not to rediscover, each a `TraitSpec` or `(TraitSpec, axis or None)`
    (see `_existing_axes`). Each result carries its pole exemplars as samples of its new key
    (quality 1.0 at the positive end, 0.0 at the negative end). Raises `TooFewTextsError`
    below ten distinct texts.
    """
    _check_effort(effort)
    samples = [
        Sample(
            s.trait,
            validate_text(s.text, where=f"sample {i}: text"),
            validate_quality(s.quality, where=f"sample {i}"),
        )
        for i, s in enumerate(samples)
    ]
    texts = pooled_texts(samples)
    if len(texts) < MIN_TEXTS:
        raise TooFewTextsError(
            f"discovery needs at least {MIN_TEXTS} distinct sample texts, the model has {len(texts)}"
        )
    _report(progress, 0.0, "embedding")
    x = np.asarray(embedder.encode(texts), dtype=np.float64)
    rows = {dedup_key(t): x[i] for i, t in enumerate(texts)}
    existing_axes, taken_keys = _existing_axes(existing, samples, embedder, rows)
    _report(progress, 0.3, "searching")

    centred = x - x.mean(axis=0)
    # One thread: results then never depend on the machine's core count (OpenMP/BLAS reduction
    # order), and on a busy 2-core worker extra threads only fight (measured 10x slower at 40 texts).
    with threadpool_limits(limits=1):
        candidates = sorted(_candidates(x, effort, progress), key=lambda c: (-c.score, c.order))
    chosen: list[_Candidate] = []
    for cand in candidates:
        if len(chosen) == MAX_DISCOVERED_TRAITS or cand.score <= 1e-9:
            break
        blocked = existing_axes + [c.axis for c in chosen]
        if any(_redundant(cand.axis, other, centred) for other in blocked):
            continue
        chosen.append(cand)
    _report(progress, 0.8, "labelling")

    n = len(texts)
    per_pole = min(MAX_EXEMPLARS_PER_POLE, max(MIN_EXEMPLARS_PER_POLE, n // 4))
    out: list[DiscoveredTrait] = []
    for index, cand in enumerate(chosen, start=1):
        order = np.argsort(centred @ cand.axis, kind="stable")
        bottom, top = order[:per_pole], order[::-1][:per_pole]
        pos_words, neg_words = pole_phrases(texts, top, bottom, _DESCRIPTION_WORDS)
        typical = (
            [texts[i] for i in _typical(x, top, _TYPICAL_TEXTS)],
            [texts[i] for i in _typical(x, bottom, _TYPICAL_TEXTS)],
        )
        spec = _make_spec(index, pos_words, neg_words, cand.explained, n, taken_keys, typical)
        exemplars = [Sample(trait=spec.key, text=texts[i], quality=1.0) for i in top]
        exemplars += [Sample(trait=spec.key, text=texts[i], quality=0.0) for i in bottom]
        out.append(DiscoveredTrait(spec=spec, samples=exemplars, explained_variance=round(cand.explained, 6)))
    _report(progress, 1.0, "done")
    return out
