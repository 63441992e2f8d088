"""Synthesis: new labelled samples for a model's traits, fully offline by default.

- `from_traits`: cold-start exemplars for both poles of each trait: written by a generator when one is
  given, else real texts picked from the pool when there is one (`core.engine.pool_picks`), else templated
  descriptions of the poles from its name, pole labels and description (`core.engine.generators`).
- `diversify`: voice-preserving variations of the seed samples (light edits that keep the
  writer's words); each variant copies its seed's quality (a neutral seed, quality 0.5, is not varied).

Every candidate passes the pole check before it is kept: it is embedded and must lie on the
side of the trait's axis that it claims. The axis is the shared `balanced_cosine` prototype
axis (shrinkage 1; a side needs no calibration) of the trait's own samples when they cover
both poles, otherwise of embeddings of the pole labels phrased with the trait's name and
description. Texts already
present for the trait (ignoring case, punctuation and spacing) are never returned. The
random choices are seeded from the inputs, so the same inputs give the same samples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from core.contract import MAX_TEXT_CHARS, SYNTH_TYPES, pole_of
from core.embedders.base import Embedder
from core.engine.errors import (
    EngineError,
    GeneratorError,
    InvalidEffortError,
    InvalidSynthTypeError,
    NoSamplesError,
)
from core.engine.generators import TextGenerator, template_candidates, variation_candidates
from core.engine.pole_text import pole_texts, zero_shot_axis
from core.engine.poles import pole_signs
from core.engine.pool_picks import NEAR_DUPLICATE_COS, neighbours, pole_exemplars, standardised, unit_rows
from core.engine.text_utils import dedup_key, stable_seed
from core.engine.trait_model import AxisSpectrum
from core.engine.types import ProgressFn, Sample, TraitSpec
from core.engine.validation import (
    validate_quality,
    validate_text,
    validate_traits,
)

#: from_traits: kept exemplars per pole of each trait.
PER_POLE_BY_EFFORT: dict[str, int] = {"low": 4, "medium": 8, "high": 16, "xhigh": 32, "max": 64}
#: diversify: kept variants per seed, and in total over all traits.
VARIANTS_PER_SEED_BY_EFFORT: dict[str, int] = {"low": 1, "medium": 2, "high": 3, "xhigh": 5, "max": 8}
MAX_VARIANTS_BY_EFFORT: dict[str, int] = {"low": 50, "medium": 200, "high": 500, "xhigh": 1000, "max": 2000}
#: Candidates tried per wanted sample (the rest of the budget absorbs pole-check rejections).
CANDIDATE_FACTOR = 3
#: A generator's prompt: pole texts that say what the pole is, and pool texts that show how the domain's
#: texts look (cut to a few hundred characters, so a long pool text cannot crowd out the rest).
PROMPT_POLE_TEXTS = 6
STYLE_EXAMPLES = 4
STYLE_EXAMPLE_CHARS = 300


@dataclass
class PoleCheck:
    """Which side of a trait's axis a text lies on: sign of `x . w - offset`.

    `w`, `offset` are the shared `balanced_cosine` axis with shrinkage 1 (the class-balanced,
    quality-weighted prototype difference, 0 at the prototypes' midpoint); `w` is None when the
    two poles could not be told apart, and then nothing passes. `source` says where the axis
    came from: "samples" or "labels".
    """

    w: np.ndarray | None
    offset: float
    source: str

    def margins(self, embeddings: np.ndarray) -> np.ndarray:
        """> 0 on the positive side, < 0 on the negative side."""
        if self.w is None:
            return np.zeros(len(embeddings))
        margin: np.ndarray = np.asarray(embeddings, dtype=np.float64) @ self.w - self.offset
        return margin

    def passes(self, embeddings: np.ndarray, positive: Sequence[bool]) -> np.ndarray:
        m = self.margins(embeddings)
        want = np.asarray(positive, dtype=bool)
        return np.where(want, m > 0, m < 0)


def label_anchor_texts(trait: TraitSpec, positive: bool) -> list[str]:
    """The phrasings of one pole embedded for a label-based axis."""
    label = trait.positive_label if positive else trait.negative_label
    texts = [label, f"{trait.name}: {label}"]
    if trait.description.strip():
        texts.append(f"{label}. {trait.description.strip()}")
    return texts


def _check_from(x: np.ndarray, q: np.ndarray, source: str) -> PoleCheck:
    w, offset = AxisSpectrum.from_data(np.asarray(x, dtype=np.float64), q).axis(1.0)
    return PoleCheck(w if np.any(w) else None, offset, source)


def sample_pole_check(trait: TraitSpec, samples: Sequence[Sample], embedder: Embedder) -> PoleCheck | None:
    """The trait's axis from its samples (`samples` of this trait covering both poles; neutral ones define
    neither pole), or None."""
    own = [s for s in samples if s.trait == trait.key]
    own = [s for s, sign in zip(own, pole_signs([s.quality for s in own]), strict=True) if sign]
    q = np.array([s.quality for s in own], dtype=np.float64)
    if own and len(set(pole_signs(q).tolist())) == 2:
        check = _check_from(embedder.encode([s.text for s in own]), q, "samples")
        if check.w is not None:
            return check
    return None


def label_pole_check(trait: TraitSpec, embedder: Embedder) -> PoleCheck:
    """The trait's zero-shot axis: from embeddings of its pole phrasings."""
    pos, neg = label_anchor_texts(trait, True), label_anchor_texts(trait, False)
    q = np.array([1.0] * len(pos) + [0.0] * len(neg))
    return _check_from(embedder.encode(pos + neg), q, "labels")


def zero_shot_pole_check(trait: TraitSpec, embedder: Embedder) -> PoleCheck:
    """The axis a zero-shot trait is scored on: its pole texts (`core.engine.pole_text`)."""
    pos, neg = pole_texts(trait, True), pole_texts(trait, False)
    axis = zero_shot_axis(embedder.encode(pos), embedder.encode(neg))
    return PoleCheck(axis.w if axis.direction is not None else None, axis.offset, "pole_texts")


def build_pole_check(trait: TraitSpec, samples: Sequence[Sample], embedder: Embedder) -> PoleCheck:
    """The trait's axis from its samples when they cover both poles, else its labels."""
    return sample_pole_check(trait, samples, embedder) or label_pole_check(trait, embedder)


@dataclass
class _Batch:
    """Candidates of one trait waiting for the pole check."""

    trait: TraitSpec
    texts: list[str] = field(default_factory=list)
    qualities: list[float] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # which quota a candidate counts toward


def _usable(text: str) -> str | None:
    text = text.strip() if isinstance(text, str) else ""
    return text if 0 < len(text) <= MAX_TEXT_CHARS else None


def _report(progress: ProgressFn | None, fraction: float, phase: str) -> None:
    if progress is not None:
        progress(min(1.0, max(0.0, fraction)), phase)


def _ask(generator: TextGenerator, prompt: str, n: int) -> list[str]:
    try:
        out = generator.generate(prompt, n)
    except EngineError:
        raise
    except Exception as exc:  # a user-supplied generator: report, do not crash deep inside
        raise GeneratorError(f"text generator failed: {type(exc).__name__}: {exc}") from exc
    return [t for t in out if isinstance(t, str)]


def _labels(trait: TraitSpec, positive: bool) -> tuple[str, str]:
    pos, neg = trait.positive_label.strip(), trait.negative_label.strip()
    return (pos, neg) if positive else (neg, pos)


def _bullets(texts: Iterable[str]) -> str:
    return "\n".join(f"- {' '.join(t.split())}" for t in texts)


def from_traits_prompt(trait: TraitSpec, positive: bool, n: int, style: Sequence[str]) -> str:
    """What a generator is asked for one pole: real texts of it, not descriptions of it.

    The trait's name, description and the pole's texts (`pole_texts`) say what the pole is; `style`, a few
    of the model's pool texts, shows how texts of the domain look (their pole does not matter)."""
    label, other = _labels(trait, positive)
    about = f"\nDescription: {' '.join(trait.description.split())}" if trait.description.strip() else ""
    prompt = (
        f"Trait: {trait.name.strip() or trait.key}, from '{trait.positive_label.strip()}' to "
        f"'{trait.negative_label.strip()}'.{about}\n"
        f"The pole '{label}' (the opposite of '{other}') is marked by:\n"
        f"{_bullets(pole_texts(trait, positive)[:PROMPT_POLE_TEXTS])}\n"
    )
    if style:
        prompt += f"Texts of this domain look like these (whatever their pole):\n{_bullets(style)}\n"
    return prompt + (
        f"Write {n} different texts that are clearly '{label}', as the people of this domain write them: "
        "real messages, not descriptions or opinions of the trait, and without naming the trait."
    )


def diversify_prompt(trait: TraitSpec, seed: Sample, n: int) -> str:
    """What a generator is asked for one seed: paraphrases that keep its label."""
    label, _ = _labels(trait, pole_of(seed.quality) == "positive")
    return (
        f"Paraphrase the text below in {n} different ways. Keep the writer's voice and meaning, and keep it "
        f"as clearly '{label}' (trait: {trait.name.strip() or trait.key}) as it is.\n\n"
        f"Text: {seed.text}"
    )


def _style_examples(trait: TraitSpec, pool: _Pool | None) -> list[str]:
    """A few pool texts, chosen at random but the same for the same trait and pool."""
    if pool is None:
        return []
    rng = random.Random(stable_seed("style", trait, len(pool.texts)))
    picks = sorted(rng.sample(range(len(pool.texts)), min(STYLE_EXAMPLES, len(pool.texts))))
    return [pool.texts[i][:STYLE_EXAMPLE_CHARS] for i in picks]


def _select(
    batch: _Batch,
    checks: Sequence[PoleCheck],
    embedder: Embedder,
    taken: set[str],
    quotas: dict[int, int],
    near: np.ndarray | None = None,
) -> list[tuple[Sample, int]]:
    """(sample, group) of the candidates that pass every pole check and are new, in candidate order,
    up to each group's quota.

    `near`: embeddings of the trait's texts; when given, a candidate with cosine above
    `NEAR_DUPLICATE_COS` to one of them or to a candidate kept before it is not kept either."""
    if not batch.texts:
        return []
    x = np.asarray(embedder.encode(batch.texts), dtype=np.float64)
    want = (pole_signs(batch.qualities) > 0).tolist()
    ok = np.all([c.passes(x, want) for c in checks], axis=0)
    unit = unit_rows(x)
    seen = [unit_rows(near)] if near is not None and len(near) else []
    kept: list[tuple[Sample, int]] = []
    counts: dict[int, int] = {}
    for i, (text, quality, group) in enumerate(zip(batch.texts, batch.qualities, batch.groups, strict=True)):
        key = dedup_key(text)
        if not ok[i] or not key or key in taken or counts.get(group, 0) >= quotas[group]:
            continue
        if near is not None and any(float(np.max(u @ unit[i])) > NEAR_DUPLICATE_COS for u in seen):
            continue
        taken.add(key)
        seen.append(unit[i : i + 1])
        counts[group] = counts.get(group, 0) + 1
        kept.append((Sample(trait=batch.trait.key, text=text, quality=quality), group))
    return kept


@dataclass
class _Pool:
    """The unlabelled texts synthesis picks from, embedded once."""

    texts: list[str]
    x: np.ndarray


def _pool_exemplars(
    trait: TraitSpec, seeds: list[Sample], pool: _Pool, embedder: Embedder, taken: set[str], per_pole: int
) -> list[Sample]:
    """from_traits from the pool: the zero-shot axis, plus the samples' axis when they cover both poles.

    A pick must lie on its pole of every axis used (the pole check), and ranks by the sum of the
    standardised margins."""
    checks = [zero_shot_pole_check(trait, embedder)]
    if (own := sample_pole_check(trait, seeds, embedder)) is not None:
        checks.append(own)
    margins = [c.margins(pool.x) for c in checks]
    score = np.sum([standardised(m) for m in margins], axis=0)
    agree = np.all([np.sign(m) == np.sign(score) for m in margins], axis=0)
    pos, neg = pole_exemplars(pool.texts, pool.x, np.where(agree, score, 0.0), taken, per_pole)
    return [Sample(trait.key, pool.texts[i], 1.0) for i in pos] + [
        Sample(trait.key, pool.texts[i], 0.0) for i in neg
    ]


def _from_traits(
    traits: list[TraitSpec],
    seeds: list[Sample],
    effort: str,
    embedder: Embedder,
    generator: TextGenerator | None,
    progress: ProgressFn | None,
    pool: _Pool | None,
) -> list[Sample]:
    per_pole = PER_POLE_BY_EFFORT[effort]
    out: list[Sample] = []
    for t_index, trait in enumerate(traits):
        _report(progress, t_index / len(traits), "generating")
        taken = {dedup_key(s.text) for s in seeds if s.trait == trait.key}
        if generator is None and pool is not None:
            out += _pool_exemplars(trait, seeds, pool, embedder, taken, per_pole)
            continue
        if generator is not None:
            # Generated texts must lie on their pole of the zero-shot axis, and of the samples' axis when the
            # samples cover both poles; and be no near-duplicate of the trait's texts nor of each other.
            checks = [zero_shot_pole_check(trait, embedder)]
            checks += [own] if (own := sample_pole_check(trait, seeds, embedder)) is not None else []
            own_texts = [s.text for s in seeds if s.trait == trait.key]
            near = np.asarray(embedder.encode(own_texts), dtype=np.float64) if own_texts else np.empty((0, 0))
        else:
            checks, near = [build_pole_check(trait, seeds, embedder)], None
        batch = _Batch(trait)
        style = _style_examples(trait, pool)
        for group, positive in enumerate((True, False)):
            want = per_pole * CANDIDATE_FACTOR
            if generator is not None:
                prompt = from_traits_prompt(trait, positive, want, style)
                texts: Iterable[str] = _ask(generator, prompt, want)
            else:
                rng = random.Random(stable_seed("from_traits", trait, positive))
                texts = islice(template_candidates(trait, positive, rng), want)
            for text in texts:
                if (clean := _usable(text)) is not None:
                    batch.texts.append(clean)
                    batch.qualities.append(1.0 if positive else 0.0)
                    batch.groups.append(group)
        _report(progress, (t_index + 0.5) / len(traits), "checking")
        quotas = {0: per_pole, 1: per_pole}
        out += [sample for sample, _ in _select(batch, checks, embedder, taken, quotas, near)]
    return out


def _seed_order(traits: list[TraitSpec], seeds: list[Sample]) -> list[Sample]:
    """Seeds taking turns across traits, each trait's in a fixed pseudo-random order.

    When the total cap is smaller than the seed count, every trait still gets variants. Neutral seeds
    (quality 0.5) are not varied: a variant copies its seed's quality, would train nothing (it defines
    neither pole) and has no side of the axis to be checked against.
    """
    on_pole = [s for s, sign in zip(seeds, pole_signs([s.quality for s in seeds]), strict=True) if sign]
    per_trait = [
        sorted(
            (s for s in on_pole if s.trait == t.key),
            key=lambda s: (stable_seed("seed", s.trait, s.text, s.quality), s.text),
        )
        for t in traits
    ]
    order: list[Sample] = []
    for i in range(max((len(p) for p in per_trait), default=0)):
        order += [p[i] for p in per_trait if i < len(p)]
    return order


def _round_robin(lists: list[list[Sample]], limit: int) -> Iterator[Sample]:
    produced = 0
    for i in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if i < len(x):
                if produced == limit:
                    return
                produced += 1
                yield x[i]


def _diversify(
    traits: list[TraitSpec],
    seeds: list[Sample],
    effort: str,
    embedder: Embedder,
    generator: TextGenerator | None,
    progress: ProgressFn | None,
    pool: _Pool | None,
) -> list[Sample]:
    total_cap = MAX_VARIANTS_BY_EFFORT[effort]
    ordered = _seed_order(traits, seeds)
    if not ordered:
        raise NoSamplesError(
            "diversify needs seed samples on a pole: none of the traits has any (quality 0.5 is neutral)"
        )
    ordered = ordered[:total_cap]  # beyond the cap a seed could not get even one variant
    per_seed = min(VARIANTS_PER_SEED_BY_EFFORT[effort], math.ceil(total_cap / len(ordered)))
    kept_by_seed: list[list[Sample]] = [[] for _ in ordered]
    for t_index, trait in enumerate(traits):
        mine = [(i, s) for i, s in enumerate(ordered) if s.trait == trait.key]
        if not mine:
            continue
        _report(progress, t_index / len(traits), "generating")
        check = build_pole_check(trait, seeds, embedder)
        taken = {dedup_key(s.text) for s in seeds if s.trait == trait.key}
        if generator is None and pool is not None:
            # A neighbour must lie on the seed's side of the samples' axis and of the zero-shot axis.
            margins = [c.margins(pool.x) for c in (check, zero_shot_pole_check(trait, embedder))]
            place = np.sum([standardised(m) for m in margins], axis=0)
            seed_x = embedder.encode([seed.text for _, seed in mine])
            for (i, seed), sx in zip(mine, seed_x, strict=True):
                sign = pole_signs([seed.quality])[0]
                on_side = np.all([np.sign(m) == sign for m in margins], axis=0)
                picks = neighbours(pool.texts, pool.x, on_side, sx, taken, per_seed, place * sign)
                kept_by_seed[i] += [Sample(trait.key, pool.texts[j], seed.quality) for j in picks]
            continue
        batch = _Batch(trait)
        want = per_seed * CANDIDATE_FACTOR
        for j, (i, seed) in enumerate(mine):
            if generator is not None:
                # One request per seed: worth reporting each.
                _report(progress, (t_index + 0.5 * j / len(mine)) / len(traits), "generating")
                texts: Iterable[str] = _ask(generator, diversify_prompt(trait, seed, want), want)
            else:
                rng = random.Random(stable_seed("diversify", seed.trait, seed.text, seed.quality))
                texts = islice(variation_candidates(seed.text, rng), want)
            for text in texts:
                if (clean := _usable(text)) is not None:
                    batch.texts.append(clean)
                    batch.qualities.append(seed.quality)
                    batch.groups.append(i)
        _report(progress, (t_index + 0.5) / len(traits), "checking")
        for sample, i in _select(batch, [check], embedder, taken, {i: per_seed for i, _ in mine}):
            kept_by_seed[i].append(sample)
    return list(_round_robin(kept_by_seed, total_cap))


def pool_texts(pool: Iterable[str]) -> list[str]:
    """The usable texts of a pool, stripped, in order, each once (texts equal up to case, punctuation
    and spacing count once)."""
    out: dict[str, str] = {}
    for text in pool:
        if (clean := _usable(text)) is not None and (key := dedup_key(clean)):
            out.setdefault(key, clean)
    return list(out.values())


def synthesis_source(pool: Iterable[str], generator: TextGenerator | None) -> str:
    """Where `synthesize` takes its texts from: "generator" (written for the trait; the pool, if any, only
    shows it the domain's style), "pool" (real texts) or "template" (descriptions of the poles, not texts of
    them)."""
    if generator is not None:
        return "generator"
    return "pool" if pool_texts(pool) else "template"


def _clean_seeds(traits: list[TraitSpec], seeds: Iterable[Sample]) -> list[Sample]:
    keys = {t.key for t in traits}
    clean = []
    for i, s in enumerate(seeds):
        if not isinstance(s, Sample):
            raise EngineError(f"seed {i} must be a Sample, got {type(s).__name__}")
        if s.trait not in keys:
            continue  # seeds of other traits play no part
        where = f"seed {i}" + (f" (id {s.id})" if s.id is not None else "")
        text = validate_text(s.text, where=f"{where}: text")
        clean.append(Sample(s.trait, text, validate_quality(s.quality, where=where), s.id))
    return clean


def synthesize(
    traits: Iterable[TraitSpec],
    seeds: Iterable[Sample],
    *,
    synth_type: str = "from_traits",
    effort: str = "medium",
    embedder: Embedder,
    generator: TextGenerator | None = None,
    pool: Sequence[str] = (),
    progress: ProgressFn | None = None,
) -> list[Sample]:
    """New samples (not yet stored, `id` None) for `traits`.

    `seeds`: the model's existing samples. They give each trait its pole-check axis and the
    texts not to repeat; `diversify` varies them. `pool`: unlabelled real texts of the model's
    domain (never its evaluation set); when it holds any and there is no generator, every new sample is
    one of them (`synthesis_source`). `generator`: an optional `TextGenerator` asked for the texts instead
    (a few pool texts go into its prompt as examples of the domain's style); its texts pass the pole check.
    Raises `InvalidSynthTypeError`, `InvalidEffortError`, `NoTraitsError`, and for
    `diversify` without any seed of the given traits `NoSamplesError`.
    """
    if synth_type not in SYNTH_TYPES:
        raise InvalidSynthTypeError(
            f"unknown synth_type {synth_type!r}; expected one of {', '.join(SYNTH_TYPES)}"
        )
    if effort not in PER_POLE_BY_EFFORT:
        raise InvalidEffortError(
            f"unknown effort {effort!r}; expected one of {', '.join(PER_POLE_BY_EFFORT)}"
        )
    if generator is not None and not isinstance(generator, TextGenerator):
        raise GeneratorError(f"generator must have generate(prompt, n), got {type(generator).__name__}")
    traits = validate_traits(list(traits))
    seeds = _clean_seeds(traits, seeds)
    texts = pool_texts(pool)
    picked = _Pool(texts, np.asarray(embedder.encode(texts), dtype=np.float64)) if texts else None
    run = _from_traits if synth_type == "from_traits" else _diversify
    out = run(traits, seeds, effort, embedder, generator, progress, picked)
    _report(progress, 1.0, "done")
    return out
