"""A training's steps on their own (service/runs/train.py): its progress phases and what it trains on."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.contract import pole_of
from core.engine.votes import Vote
from service.runs.train import PROGRESS, Inputs, Phase, progress_at, training_set
from service.store.schema import FeedbackLabel, Trait


def test_progress_phases_follow_each_other_within_the_run() -> None:
    bounds = [PROGRESS[p] for p in ("embedding", "fitting", "saving")]
    assert all(0.0 <= start < end <= 1.0 for start, end in bounds)
    assert all(a[1] <= b[0] for a, b in zip(bounds, bounds[1:], strict=False))


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(list(PROGRESS)), st.floats(0, 1), st.floats(0, 1))
def test_progress_in_a_phase_grows_and_stays_inside_it(phase: Phase, a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    start, end = PROGRESS[phase]
    assert start - 1e-12 <= progress_at(phase, lo) <= progress_at(phase, hi) <= end + 1e-12


label = st.tuples(
    st.sampled_from(["tone", "gone"]), st.sampled_from(["a", "b", "c"]), st.sampled_from([0.0, 0.5, 1.0])
)


@settings(max_examples=60, deadline=None)
@given(st.lists(label, max_size=6), st.lists(label, max_size=6))
def test_the_training_set_takes_the_buffer_it_can_use(
    stored: list[tuple[str, str, float]], buffered: list[tuple[str, str, float]]
) -> None:
    """Feedback of one pole of an untrained trait stays buffered; of the rest, a removed trait's labels are
    consumed but not trained on; every text trains once per trait."""
    votes = [Vote(trait="tone", text=text, quality=q, id=i + 1) for i, (_, text, q) in enumerate(stored)]
    feedback = [
        FeedbackLabel(id=i + 1, trait_key=key, text=text, quality=q, annotator=f"p{i}")
        for i, (key, text, q) in enumerate(buffered)
    ]
    inputs = Inputs({}, [Trait(key="tone")], votes, feedback, None, True, None, 1)
    data = training_set(inputs)
    assert {f.id for f in data.usable} <= {f.id for f in data.feedback} <= {f.id for f in feedback}
    assert {f.id for f in data.feedback if f.trait_key == "tone"} == {f.id for f in data.usable}
    for key in ("tone", "gone"):
        poles = {pole_of(f.quality) for f in feedback if f.trait_key == key}
        taken = [f for f in data.feedback if f.trait_key == key]
        if {"positive", "negative"} <= poles:  # both poles in the buffer: nothing of it is held
            assert len(taken) == len([f for f in feedback if f.trait_key == key])
        elif key == "gone":  # no samples: one pole alone would leave the trait untrainable
            assert taken == []
    assert len({(x.trait, x.text) for x in data.samples}) == len(data.samples)
    assert {x.trait for x in data.samples} <= {"tone"}
