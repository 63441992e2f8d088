"""Synthesis from an unlabelled pool: real texts picked for each pole, or near each seed on its pole."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.embedders import get_embedder
from core.engine.pole_text import pole_texts
from core.engine.pool_picks import NEAR_DUPLICATE_COS
from core.engine.synthesis import (
    PER_POLE_BY_EFFORT,
    synthesis_source,
    synthesize,
)
from core.engine.text_utils import dedup_key
from core.engine.types import Sample, TraitSpec

PRAISE = [
    "The staff were so friendly and helpful, great praise to them.",
    "Lovely friendly staff, I have nothing but praise.",
    "Praise for the cheerful staff who made my day.",
    "The friendly team deserves all the praise, we will be back.",
    "Wonderful staff, friendly smiles everywhere.",
    "Staff were warm and friendly, high praise.",
    "I want to praise the friendly staff at the front desk.",
    "Such friendly staff, truly worth the praise.",
    "Friendly faces and praise-worthy service from the staff.",
    "Our waiter was friendly, the staff earn my praise.",
    "Friendly, patient staff, praise where it is due.",
    "Every one of the staff was friendly, full praise.",
]
COMPLAINTS = [
    "My refund has been delayed for three weeks and nobody answers.",
    "Still waiting on the refund, the delay is unacceptable.",
    "The package delay ruined the gift and the refund never came.",
    "I asked for a refund twice and got another delay notice.",
    "Refund request ignored, shipping delay again.",
    "Another delay, another week without my refund.",
    "Why does a simple refund take a month of delays?",
    "The delivery delay was endless and the refund is still pending.",
    "Delay after delay, and the refund form keeps failing.",
    "I want my refund now, this delay has cost me money.",
    "A refund delay of six weeks is a scandal.",
    "Refund still missing after the delay they promised to fix.",
]
TONE = TraitSpec(
    "tone", "Tone", "praise, friendly", "refund, delay", "How the customer feels about the service"
)


@pytest.fixture(scope="module")
def embedder():
    return get_embedder("hashing")


def _side(embedder, pos: list[str], neg: list[str], texts: list[str]) -> np.ndarray:
    """Independent pole check: side of the midpoint along (mean positive - mean negative)."""
    p = embedder.encode(pos).astype(np.float64).mean(axis=0)
    n = embedder.encode(neg).astype(np.float64).mean(axis=0)
    return np.sign((embedder.encode(texts).astype(np.float64) - (p + n) / 2) @ (p - n))


def test_from_traits_picks_real_pool_texts_for_each_pole(embedder) -> None:
    out = synthesize([TONE], [], effort="low", embedder=embedder, pool=PRAISE + COMPLAINTS)
    per_pole = PER_POLE_BY_EFFORT["low"]
    assert sum(s.quality == 1.0 for s in out) == per_pole == sum(s.quality == 0.0 for s in out)
    # Real texts: every one of them is a pool text, none a description of the pole.
    assert {s.text for s in out if s.quality == 1.0} <= set(PRAISE)
    assert {s.text for s in out if s.quality == 0.0} <= set(COMPLAINTS)
    # On their pole of the zero-shot axis: the trait's pole texts (docs/engine.md).
    side = _side(embedder, pole_texts(TONE, True), pole_texts(TONE, False), [s.text for s in out])
    assert all(side[i] == (1 if s.quality == 1.0 else -1) for i, s in enumerate(out))
    assert synthesis_source(PRAISE, None) == "pool" and synthesis_source([" "], None) == "template"


def test_from_traits_pool_picks_are_diverse_and_never_near_duplicates(embedder) -> None:
    # Each praise text three times with a word appended: the picks still hold no two near-duplicates.
    pool = [f"{t} {tail}" for t in PRAISE for tail in ("Yes.", "Really.", "Indeed.")] + COMPLAINTS
    out = synthesize([TONE], [], effort="medium", embedder=embedder, pool=pool)
    pos = [s.text for s in out if s.quality == 1.0]
    x = embedder.encode(pos).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    sims = x @ x.T - 2 * np.eye(len(pos))
    assert sims.max() <= NEAR_DUPLICATE_COS
    assert len(pos) == PER_POLE_BY_EFFORT["medium"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    labelled=st.sets(st.sampled_from(PRAISE + COMPLAINTS), min_size=0, max_size=12),
    synth_type=st.sampled_from(["from_traits", "diversify"]),
    order=st.randoms(use_true_random=False),
)
def test_pool_picks_are_pool_texts_never_labelled(embedder, labelled, synth_type, order) -> None:
    seeds = [Sample("tone", t, 1.0 if t in PRAISE else 0.0) for t in sorted(labelled)]
    # A labelled text also in the pool in other case and punctuation is still never picked.
    pool = PRAISE + COMPLAINTS + [t.upper().rstrip(".?") for t in labelled]
    order.shuffle(pool)
    if synth_type == "diversify" and not seeds:
        return
    out = synthesize([TONE], seeds, synth_type=synth_type, effort="low", embedder=embedder, pool=pool)
    taken = {dedup_key(t) for t in labelled}
    assert all(s.text in pool for s in out)
    assert all(dedup_key(s.text) not in taken for s in out)
    keys = [dedup_key(s.text) for s in out]
    assert len(keys) == len(set(keys))


def test_from_traits_pool_uses_the_samples_axis_too(embedder) -> None:
    # Labels that say nothing useful about these texts: the samples' axis decides, and a text that the
    # samples put on the other side is never picked for a pole.
    vague = TraitSpec("tone", "Tone", "good", "bad", "")
    seeds = [Sample("tone", PRAISE[0], 1.0), Sample("tone", PRAISE[1], 1.0)]
    seeds += [Sample("tone", COMPLAINTS[0], 0.0), Sample("tone", COMPLAINTS[1], 0.0)]
    out = synthesize([vague], seeds, effort="low", embedder=embedder, pool=PRAISE + COMPLAINTS)
    side = _side(embedder, PRAISE[:2], COMPLAINTS[:2], [s.text for s in out])
    assert all(side[i] == (1 if s.quality == 1.0 else -1) for i, s in enumerate(out))


def test_diversify_from_the_pool_gives_the_nearest_texts_on_the_seed_pole(embedder) -> None:
    seeds = [Sample("tone", PRAISE[0], 1.0), Sample("tone", COMPLAINTS[0], 0.0)]
    pool = PRAISE[1:] + COMPLAINTS[1:]
    out = synthesize([TONE], seeds, synth_type="diversify", effort="medium", embedder=embedder, pool=pool)
    assert out and all(s.text in pool for s in out)
    assert {s.text for s in out if s.quality == 1.0} <= set(PRAISE)
    assert {s.text for s in out if s.quality == 0.0} <= set(COMPLAINTS)
    # Near the seed: the praise variants are among the praise texts closest to it (nearness comes first; of
    # texts about as near, the one clearer on the pole).
    x = embedder.encode(PRAISE).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    nearest = [PRAISE[i] for i in np.argsort(-(x[1:] @ x[0]))[:4] + 1]
    picked = [s.text for s in out if s.quality == 1.0]
    assert len(picked) == 2 and set(picked) <= set(nearest), (picked, nearest)
